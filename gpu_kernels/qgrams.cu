// Exact pruning's counting filter (docs/pruning.md): q-gram presence bitsets, one thread
// per sequence, and per pair the smaller count of either sequence's q-gram positions
// whose q-gram is in the other's bitset, one thread per pair; exactly what
// src/seqpairs/backends/cpu/qgrams.py computes.
typedef unsigned long long u64;

#define GOLDEN 0x9E3779B97F4A7C15ull

__device__ __forceinline__ u64 slot_of(u64 code, int q, int bits)
{
    return 2 * q <= bits ? code : (code * GOLDEN) >> (64 - bits);
}

extern "C" __global__ void qgram_bitsets(const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
              int n, int q, int bits, u64* __restrict__ sets)
{
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= n) return;
    const size_t words = ((size_t)1 << bits) / 64 > 0 ? ((size_t)1 << bits) / 64 : 1;
    u64* set = sets + (size_t)s * words;
    const u64 mask = (1ull << (2 * q)) - 1;
    u64 code = 0;
    const long long start = offsets[s], stop = offsets[s + 1];
    for (long long k = start; k < stop; k++) {
        code = ((code << 2) | codes[k]) & mask;
        if (k - start >= q - 1) {
            const u64 slot = slot_of(code, q, bits);
            set[slot >> 6] |= 1ull << (slot & 63);
        }
    }
}

__device__ __forceinline__ int present(const unsigned char* __restrict__ codes, long long start,
                                       long long stop, int q, int bits,
                                       const u64* __restrict__ set)
{
    const u64 mask = (1ull << (2 * q)) - 1;
    u64 code = 0;
    int count = 0;
    for (long long k = start; k < stop; k++) {
        code = ((code << 2) | codes[k]) & mask;
        if (k - start >= q - 1) {
            const u64 slot = slot_of(code, q, bits);
            count += (int)((__ldg(set + (slot >> 6)) >> (slot & 63)) & 1ull);
        }
    }
    return count;
}

extern "C" __global__ void qgram_shared(const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
             const long long* __restrict__ pa, const long long* __restrict__ pb, int n, int q,
             int bits, const u64* __restrict__ sets, int* __restrict__ out)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const size_t words = ((size_t)1 << bits) / 64 > 0 ? ((size_t)1 << bits) / 64 : 1;
    const long long s = pa[k], t = pb[k];
    const int in_b = present(codes, offsets[s], offsets[s + 1], q, bits, sets + (size_t)t * words);
    const int in_a = present(codes, offsets[t], offsets[t + 1], q, bits, sets + (size_t)s * words);
    out[k] = min(in_a, in_b);
}
