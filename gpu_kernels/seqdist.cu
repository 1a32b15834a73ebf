// SeqDist alignment (AmpliconNoise, ../shared/SEQDIST.md), one thread per pair.
//
// Computes exactly what src/seqpairs/backends/cpu.py computes: per pair the cost H(la, lb)
// (IEEE double, the same additions in the same order) and the counts of the chosen path,
// packed 16 bits each from the low end: SeqDist length, matches, the length at the first
// aligned pair (0xFFFF while there is none) and the length at the last one. Here they live
// in two 32-bit words, (length, matches) and (first, last), which make the same 64-bit value.
//
// Layout: B's columns are processed in vertical strips of STRIP columns whose values stay
// in registers while the thread walks down all rows of A; only the strip's last column
// (cost, counts, last-match letter) goes to a global boundary buffer, laid out [row][pair] so that a
// warp's accesses are coalesced. Register arrays are indexed only by unrolled loop
// counters, so they stay in registers.
#ifndef STRIP
#define STRIP 16
#endif


typedef unsigned int u32;
typedef unsigned long long u64;

#define NO_LETTER 4  // "last match" of a mismatch; matches no letter
#define NO_ALIGNED_PAIR 0x0000FFFFu  // (first, last) before the path's first aligned pair

#define GAP 15.0
#define HOMOPOLYMER_GAP 4.0

struct Boundary {  // the column left of the current strip, [row][pair]
    double* h;
    u32* w1;
    u32* w2;
    unsigned char* last;  // the "last match" letter of the move stored there
};

// One strip: columns j0 .. j0+STRIP-1 over all rows. FINAL: the strip holds column lb,
// whose vertical gaps are free and uncounted (trailing end gaps).
template <bool FINAL>
__device__ __forceinline__ void strip(const unsigned char* A, const unsigned char* B, int la,
                                      int lb, int j0, const double* s_subst, Boundary bnd,
                                      size_t stride, double* out_h, u64* out_p)
{
    // Strip constants: B's letters, last column.
    int b[STRIP];
    bool last_col[STRIP];
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        const int j = j0 + t;
        b[t] = (!FINAL || j <= lb) ? B[j - 1] : 0;  // columns past lb are computed, ignored
        last_col[t] = FINAL && j == lb;
    }
    // Row 0: H(0, j) = 15 j, length j, no aligned pair.
    double h[STRIP];
    u32 w1[STRIP], w2[STRIP];
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        h[t] = GAP * (j0 + t);
        w1[t] = (u32)(j0 + t);
        w2[t] = NO_ALIGNED_PAIR;
    }
    double diag_h = GAP * (j0 - 1);  // H(i-1, j0-1) for i = 1
    u32 diag_w1 = (u32)(j0 - 1), diag_w2 = NO_ALIGNED_PAIR;
    // The left boundary and A's letter are loaded one row ahead, so that the global
    // memory latency hides behind the current row's cells.
    double next_h = 0.0;
    u32 next_w1 = 0u, next_w2 = 0u;
    int next_last = 0, next_a = A[0];
    if (j0 > 1) {
        next_h = bnd.h[stride];
        next_w1 = bnd.w1[stride];
        next_w2 = bnd.w2[stride];
        next_last = bnd.last[stride];
    }
#pragma unroll 1
    for (int i = 1; i <= la; i++) {
        const int a = next_a;
        const double* sub_a = s_subst + 4 * a;
        const size_t at = (size_t)i * stride;
        double left_h;
        u32 left_w1, left_w2;
        int last;  // "last match" of the move at (i, j-1), SEQDIST.md
        if (j0 == 1) {  // column 0: H(i, 0) = 15 i, UP moves, whose last match is A[i-1]
            left_h = GAP * i;
            left_w1 = (u32)i;
            left_w2 = NO_ALIGNED_PAIR;
            last = a;
        } else {
            left_h = next_h;
            left_w1 = next_w1;
            left_w2 = next_w2;
            last = next_last;
        }
        if (i < la) {
            next_a = A[i];
            if (j0 > 1) {
                next_h = bnd.h[at + stride];
                next_w1 = bnd.w1[at + stride];
                next_w2 = bnd.w2[at + stride];
                next_last = bnd.last[at + stride];
            }
        }
        const double next_diag_h = left_h;
        const u32 next_diag_w1 = left_w1, next_diag_w2 = left_w2;
        const bool last_row = i == la;  // horizontal gaps there are free and uncounted
        const double row_gap = last_row ? 0.0 : GAP;
        const double row_hp_gap = last_row ? 0.0 : HOMOPOLYMER_GAP;
        const u32 row_inc = last_row ? 0u : 1u;
#pragma unroll
        for (int t = 0; t < STRIP; t++) {
            const bool eq_a = b[t] == a;
            const bool hp = b[t] == last;  // homopolymer gap
            const double c1 = diag_h + sub_a[b[t]];
            const double c2 = left_h + (hp ? row_hp_gap : row_gap);
            const double c3 = last_col[t] ? h[t] + 0.0 : h[t] + (hp ? HOMOPOLYMER_GAP : GAP);
            // SeqDist's choice: c1 < c2 ? (c1 < c3 ? DIAG : UP) : (c2 < c3 ? LEFT : UP)
            const bool lt12 = c1 < c2;
            const bool is_diag = lt12 && c1 < c3;
            const bool is_left = !lt12 && c2 < c3;
            const double nh = is_diag ? c1 : (is_left ? c2 : c3);
            // Counts: an aligned pair adds to length and matches, sets last to the new
            // length and first to it if unset (first = min(first, length), 0xFFFF = unset);
            // a gap adds to length unless it is a trailing end gap.
            const u32 d1 = diag_w1 + (eq_a ? 0x10001u : 1u);
            const u32 d_len = d1 & 0xFFFFu;
            const u32 d2 = __vminu2(diag_w2 | 0xFFFF0000u, d_len * 0x10001u);
            const u32 n1 = is_diag ? d1 : (is_left ? left_w1 + row_inc
                                                   : w1[t] + (last_col[t] ? 0u : 1u));
            const u32 n2 = is_diag ? d2 : (is_left ? left_w2 : w2[t]);
            // Last match of this move: DIAG -> A[i-1] if it equals B[j-1]; LEFT -> B[j-1];
            // UP -> A[i-1].
            last = is_left ? b[t] : ((is_diag && !eq_a) ? NO_LETTER : a);
            diag_h = h[t];
            diag_w1 = w1[t];
            diag_w2 = w2[t];
            h[t] = left_h = nh;
            w1[t] = left_w1 = n1;
            w2[t] = left_w2 = n2;
        }
        if (!FINAL) {
            bnd.h[at] = h[STRIP - 1];
            bnd.w1[at] = w1[STRIP - 1];
            bnd.w2[at] = w2[STRIP - 1];
            bnd.last[at] = (unsigned char)last;
        }
        diag_h = next_diag_h;
        diag_w1 = next_diag_w1;
        diag_w2 = next_diag_w2;
    }
    if (FINAL) {  // pick column lb out of the registers
#pragma unroll
        for (int t = 0; t < STRIP; t++) {
            if (j0 + t == lb) {
                *out_h = h[t];
                *out_p = (u64)w1[t] | ((u64)w2[t] << 32);
            }
        }
    }
}

extern "C" __global__ void seqdist_pairs(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const double* __restrict__ subst,  // 4 x 4, SeqDist's A, C, T, G order
    double* __restrict__ bnd_h, u32* __restrict__ bnd_w1, u32* __restrict__ bnd_w2,
    unsigned char* __restrict__ bnd_m, double* __restrict__ out_cost, u64* __restrict__ out_packed)
{
    __shared__ double s_subst[16];
    if (threadIdx.x < 16) s_subst[threadIdx.x] = subst[threadIdx.x];
    __syncthreads();
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= npairs) return;
    const long long x = pa[k], y = pb[k];
    const unsigned char* A = codes + offsets[x];
    const unsigned char* B = codes + offsets[y];
    const int la = (int)(offsets[x + 1] - offsets[x]);
    const int lb = (int)(offsets[y + 1] - offsets[y]);
    const Boundary bnd = {bnd_h + k, bnd_w1 + k, bnd_w2 + k, bnd_m + k};
    const size_t stride = (size_t)npairs;
    int j0 = 1;
    for (; j0 + STRIP <= lb; j0 += STRIP)
        strip<false>(A, B, la, lb, j0, s_subst, bnd, stride, nullptr, nullptr);
    strip<true>(A, B, la, lb, j0, s_subst, bnd, stride, out_cost + k, out_packed + k);
}
