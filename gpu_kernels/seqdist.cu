// SeqDist alignment (AmpliconNoise, ../shared/SEQDIST.md), one thread per pair.
//
// Computes exactly what src/seqpairs/backends/cpu.py computes: per pair the cost H(la, lb)
// (IEEE double, the same additions in the same order) and the counts of the chosen path,
// packed 16 bits each from the low end: SeqDist length, matches, the length at the first
// aligned pair (0xFFFF while there is none) and the length at the last one.
//
// Inside the kernel the counts are kept in a form that costs less per cell, and turned
// into that one at the end:
//   w1 = aligned pairs D | matches M << 16   (gap moves leave it unchanged)
//   w2 = i+j of the first aligned pair | i+j of the last one << 16 (0xFFFF | 0: none)
// A path to (i, j) has i + j - D columns; SeqDist does not count its free trailing gaps,
// which all come after the path first reaches the last row or column, at (ie, je). So
// length = ie + je - D, and the length at an aligned pair at (i, j) is i + j - D there:
// first = (i+j of the first) - 1, last = (i+j of the last) - D. Only the last row and the
// last column track (ie + je).
//
// Layout: B's columns are processed in vertical strips of STRIP columns whose values stay
// in registers while the thread walks down all rows of A; only the strip's last column
// (cost, counts, last-match letter) goes to a global boundary buffer, laid out
// [row][pair] so that a warp's accesses are coalesced, and is read one row ahead. Register
// arrays are indexed only by unrolled loop counters, so they stay in registers.
#ifndef STRIP
#define STRIP 12
#endif

typedef unsigned int u32;
typedef unsigned long long u64;

#define GAP 15.0
#define HOMOPOLYMER_GAP 4.0
#define NO_LETTER 4              // "last match" after a mismatch; equals no letter
#define NO_ALIGNED_PAIR 0xFFFFu  // w2 before the path's first aligned pair

struct Boundary {  // the column left of the current strip, [row][pair]
    double* h;
    u32* w1;
    u32* w2;
    unsigned char* last;  // the "last match" letter of the move stored there
};

// Values of the cell to the left and of the cell up-left, as a row starts.
struct RowStart {
    double left_h;
    u32 left_w1, left_w2;
    int last;
};

// One row of one strip. LAST_ROW: horizontal gaps are free and uncounted, and the row
// tracks where the path entered it (e_row). FINAL: the strip holds column lb, whose
// vertical gaps are free and uncounted, and which tracks its entry (e_col).
template <bool FINAL, bool LAST_ROW>
__device__ __forceinline__ void row(const int (&b)[STRIP], const bool (&last_col)[STRIP],
                                    int a, const double* sub_a, int i, int j0, int lb,
                                    RowStart start, double& diag_h, u32& diag_w1, u32& diag_w2,
                                    double (&h)[STRIP], u32 (&w1)[STRIP], u32 (&w2)[STRIP],
                                    int& last_out, u32& e_row, u32& e_col, bool& up_at_lb)
{
    double left_h = start.left_h;
    u32 left_w1 = start.left_w1, left_w2 = start.left_w2;
    int last = start.last;
    const double row_gap = LAST_ROW ? 0.0 : GAP;
    const double row_hp_gap = LAST_ROW ? 0.0 : HOMOPOLYMER_GAP;
    const u32 pos = (u32)(i + j0) * 0x10001u;  // i + j of column j0, in both halves
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        const bool eq_a = b[t] == a;
        const bool hp = b[t] == last;  // homopolymer gap
        const double c1 = diag_h + sub_a[b[t]];
        const double c2 = left_h + (hp ? row_hp_gap : row_gap);
        const double c3 = (FINAL && last_col[t]) ? h[t] + 0.0
                                                 : h[t] + (hp ? HOMOPOLYMER_GAP : GAP);
        // SeqDist's choice: c1 < c2 ? (c1 < c3 ? DIAG : UP) : (c2 < c3 ? LEFT : UP)
        const bool lt12 = c1 < c2;
        const bool is_diag = lt12 && c1 < c3;
        const bool is_left = !lt12 && c2 < c3;
        const double nh = is_diag ? c1 : (is_left ? c2 : c3);
        const u32 d1 = diag_w1 + (eq_a ? 0x10001u : 1u);
        const u32 d2 = __vminu2(diag_w2 | 0xFFFF0000u, pos + (u32)t * 0x10001u);
        const u32 n1 = is_diag ? d1 : (is_left ? left_w1 : w1[t]);
        const u32 n2 = is_diag ? d2 : (is_left ? left_w2 : w2[t]);
        if (LAST_ROW)  // LEFT keeps the entry of the cell before; otherwise it enters here
            e_row = is_left ? e_row : (u32)(i + j0 + t);
        if (FINAL && last_col[t]) {  // UP keeps the entry of the cell above
            e_col = (is_diag || is_left) ? (u32)(i + lb) : e_col;
            up_at_lb = !is_diag && !is_left;
        }
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
    last_out = last;
}

// One strip: columns j0 .. j0+STRIP-1 over all rows.
template <bool FINAL>
__device__ __forceinline__ void strip(const unsigned char* A, const unsigned char* B, int la,
                                      int lb, int j0, const double* s_subst, Boundary bnd,
                                      size_t stride, u32& e_row, double* out_h, u64* out_p)
{
    int b[STRIP];
    bool last_col[STRIP];
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        const int j = j0 + t;
        b[t] = (!FINAL || j <= lb) ? B[j - 1] : 0;  // columns past lb are computed, ignored
        last_col[t] = FINAL && j == lb;
    }
    // Row 0: H(0, j) = 15 j, no aligned pair.
    double h[STRIP];
    u32 w1[STRIP], w2[STRIP];
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        h[t] = GAP * (j0 + t);
        w1[t] = 0u;
        w2[t] = NO_ALIGNED_PAIR;
    }
    double diag_h = GAP * (j0 - 1);  // H(0, j0-1)
    u32 diag_w1 = 0u, diag_w2 = NO_ALIGNED_PAIR;
    u32 e_col = (u32)lb;  // row 0 of column lb is its own entry
    bool up_at_lb = false;
    // The left boundary and A's letter are read one row ahead.
    RowStart next = {bnd.h[stride], bnd.w1[stride], bnd.w2[stride], bnd.last[stride]};
    int next_a = A[0];
    int last;
    for (int i = 1; i < la; i++) {
        const RowStart start = next;
        const int a = next_a;
        const size_t at = (size_t)i * stride;
        next = {bnd.h[at + stride], bnd.w1[at + stride], bnd.w2[at + stride],
                bnd.last[at + stride]};
        next_a = A[i];
        row<FINAL, false>(b, last_col, a, s_subst + 4 * a, i, j0, lb, start, diag_h, diag_w1,
                          diag_w2, h, w1, w2, last, e_row, e_col, up_at_lb);
        if (!FINAL) {
            bnd.h[at] = h[STRIP - 1];
            bnd.w1[at] = w1[STRIP - 1];
            bnd.w2[at] = w2[STRIP - 1];
            bnd.last[at] = (unsigned char)last;
        }
        diag_h = start.left_h;
        diag_w1 = start.left_w1;
        diag_w2 = start.left_w2;
    }
    row<FINAL, true>(b, last_col, next_a, s_subst + 4 * next_a, la, j0, lb, next, diag_h,
                     diag_w1, diag_w2, h, w1, w2, last, e_row, e_col, up_at_lb);
    if (FINAL) {  // column lb: turn the counts into SeqDist's (see the top of this file)
#pragma unroll
        for (int t = 0; t < STRIP; t++) {
            if (j0 + t == lb) {
                const u32 entry = up_at_lb ? e_col : e_row;
                const u32 aligned_pairs = w1[t] & 0xFFFFu, matches = w1[t] >> 16;
                const u32 first_pos = w2[t] & 0xFFFFu, last_pos = w2[t] >> 16;
                const bool none = first_pos == NO_ALIGNED_PAIR;
                const u64 first = none ? 0xFFFFu : first_pos - 1u;
                const u64 last_len = none ? 0u : last_pos - aligned_pairs;
                *out_h = h[t];
                *out_p = (u64)(entry - aligned_pairs) | ((u64)matches << 16) | (first << 32)
                         | (last_len << 48);
            }
        }
    } else {
        const size_t at = (size_t)la * stride;
        bnd.h[at] = h[STRIP - 1];
        bnd.w1[at] = w1[STRIP - 1];
        bnd.w2[at] = w2[STRIP - 1];
        bnd.last[at] = (unsigned char)last;
    }
}

extern "C" __global__ void seqdist_pairs(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const double* __restrict__ subst,  // 4 x 4, SeqDist's A, C, T, G order
    double* __restrict__ bnd_h, u32* __restrict__ bnd_w1, u32* __restrict__ bnd_w2,
    unsigned char* __restrict__ bnd_last, double* __restrict__ out_cost,
    u64* __restrict__ out_packed)
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
    const Boundary bnd = {bnd_h + k, bnd_w1 + k, bnd_w2 + k, bnd_last + k};
    const size_t stride = (size_t)npairs;
    // Column 0 as the first strip's boundary: H(i, 0) = 15 i, UP moves (last match A[i-1]).
    for (int i = 1; i <= la; i++) {
        const size_t at = (size_t)i * stride;
        bnd.h[at] = GAP * i;
        bnd.w1[at] = 0u;
        bnd.w2[at] = NO_ALIGNED_PAIR;
        bnd.last[at] = A[i - 1];
    }
    u32 e_row = (u32)la;  // (la, 0) is on the last row: its own entry
    int j0 = 1;
    for (; j0 + STRIP <= lb; j0 += STRIP)
        strip<false>(A, B, la, lb, j0, s_subst, bnd, stride, e_row, nullptr, nullptr);
    strip<true>(A, B, la, lb, j0, s_subst, bnd, stride, e_row, out_cost + k, out_packed + k);
}
