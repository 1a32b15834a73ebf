"""Statistics of PSSE: shuffle.py (reproducible shuffles, the RNG spec), gumbel.py
(Gumbel fits and p-values), psse.py (the psse stage's engine)."""
