"""CUDA C sources of the GPU backend (README.md here), installed as package data of
seqpairs.gpu_kernels so that backends/gpu.py finds them in any kind of install."""
