// SeqDist alignment (AmpliconNoise; the spec: docs/seqdist.md), one thread per pair.
//
// seqdist_pairs computes exactly what src/seqpairs/backends/cpu/seqdist.py computes: per pair the
// cost H(la, lb) (IEEE double, the same additions in the same order) and the counts of the
// chosen path, packed 16 bits each from the low end: SeqDist length, matches, the length
// at the first aligned pair (0xFFFF while there is none) and the length at the last one.
// seqdist_screen is the same recurrence without the first/last positions (a third fewer
// instructions per cell): cost, length, matches and the number of aligned pairs, enough
// to decide which pairs a distance or identity filter keeps; the kept ones then go
// through seqdist_pairs. The template parameter FULL selects the two. Built with
// -DMATCHES=0 the screen counts no matches (their field 0): cost and length are all a
// distance needs (the dense outputs' seqdist_dense).
//
// Inside the kernel the counts are kept in a form that costs less per cell, and turned
// into that one at the end:
//   w1 = aligned pairs D | matches M << 16   (gap moves leave it unchanged)
//   w2 = i+j of the first aligned pair | i+j of the last one << 16 (0xFFFF | 0: none)
// A path to (i, j) has i + j - D columns; SeqDist does not count its free trailing gaps,
// which all come after the path first reaches the last row or column, at (ie, je). So
// length = ie + je - D, and the length at an aligned pair at (i, j) is i + j - D there:
// first = (i+j of the first) - 1, last = (i+j of the last) - D. Only the last row and the
// last column track (ie + je). The screen keeps w1 only.
//
// Layout: B's columns are processed in vertical strips of STRIP columns whose values stay
// in registers while the thread walks down all rows of A; only the strip's last column
// (cost, counts, last-match letter) goes to a global boundary buffer, laid out
// [row][pair] so that a warp's accesses are coalesced; the next ROWS rows of it are read
// while the rows before them are computed (device memory's latency). Register
// arrays are indexed only by unrolled loop counters, so they stay in registers.
#ifndef STRIP
#define STRIP 16
#endif
#ifndef ROWS
#define ROWS 2  // rows in flight per thread
#endif
#ifndef MATCHES
#define MATCHES 1  // 0: the screen counts no matches (seqdist_dense: cost and length alone)
#endif

typedef unsigned int u32;
typedef unsigned long long u64;

// The gap costs come from the SeqDistScheme (src/seqpairs/scoring/seqdist.py) as
// -DGAP=... -DHOMOPOLYMER_GAP=... (backends/gpu/kernels.py), as exact double literals.
#if !defined(GAP) || !defined(HOMOPOLYMER_GAP)
#error "GAP and HOMOPOLYMER_GAP (the scheme's gap costs) must be defined"
#endif
// Letters are kept as the byte offset of their column in a row of the substitution table,
// so that a cell finds its cost with one addition.
#define LETTER(code) ((int)(code) * (int)sizeof(double))
#define NO_LETTER LETTER(4)  // "last match" after a mismatch; equals no letter
#define NO_ALIGNED_PAIR 0xFFFFu  // w2 before the path's first aligned pair

struct Boundary {  // the column left of the current strip, [row][pair]
    double* h;
    u32* w1;
    u32* w2;
    unsigned char* last;  // the "last match" letter of the move stored there
};

// Values of the cell to the left of a row's first column.
struct RowStart {
    double h;
    u32 w1, w2;
    int last;
};

// One row's walk through a strip: the cells to the left and up-left of the next cell.
struct Walk {
    double left_h, diag_h;
    u32 left_w1, left_w2, diag_w1, diag_w2;
    int last;          // "last match" letter of the move at the left cell
    int a;             // A[i-1]
    const char* sub_a; // row A[i-1] of the substitution table
    int i;
    u32 pos;           // i + j0 in both halves
};

__device__ __forceinline__ Walk walk(RowStart start, double diag_h, u32 diag_w1, u32 diag_w2,
                                     int a, const double* s_subst, int i, int j0)
{
    return {start.h, diag_h, start.w1, start.w2, diag_w1, diag_w2, start.last, a,
            (const char*)s_subst + 4 * a, i, (u32)(i + j0) * 0x10001u};
}

// Cell (i, j0 + t). LAST_ROW: horizontal gaps are free and uncounted, and the row tracks
// where the path entered it (e_row). FINAL: the strip holds column lb, whose vertical
// gaps are free and uncounted, and which tracks its entry (e_col). h/w1/w2 hold the cell
// above on entry and this cell on return.
template <bool FULL, bool FINAL, bool LAST_ROW>
__device__ __forceinline__ void cell(int t, int bt, bool last_col, int j0, int lb, Walk& w,
                                     double& h, u32& w1, u32& w2, u32& e_row, u32& e_col,
                                     bool& up_at_lb)
{
    const bool eq_a = bt == w.a;
    const double g = bt == w.last ? HOMOPOLYMER_GAP : GAP;  // homopolymer gap or not
    const double c1 = w.diag_h + *(const double*)(w.sub_a + bt);
    const double c2 = LAST_ROW ? w.left_h : w.left_h + g;
    const double c3 = (FINAL && last_col) ? h : h + g;
    // SeqDist's choice, c1 < c2 ? (c1 < c3 ? DIAG : UP) : (c2 < c3 ? LEFT : UP), in two
    // comparisons: the better gap move (LEFT only when c2 < c3), then DIAG when c1 is
    // below it. Same moves, ties included; the cost is the minimum of the three.
    const bool left_over_up = c2 < c3;
    const double gap_h = left_over_up ? c2 : c3;
    const bool is_diag = c1 < gap_h;
    const double nh = is_diag ? c1 : gap_h;
    const u32 d1 = w.diag_w1 + ((FULL || MATCHES) && eq_a ? 0x10001u : 1u);
    const u32 n1 = is_diag ? d1 : (left_over_up ? w.left_w1 : w1);
    u32 n2 = 0u;
    if constexpr (FULL) {
        const u32 d2 = __vminu2(w.diag_w2 | 0xFFFF0000u, w.pos + (u32)t * 0x10001u);
        n2 = is_diag ? d2 : (left_over_up ? w.left_w2 : w2);
    }
    if (LAST_ROW)  // LEFT keeps the entry of the cell before; otherwise it enters here
        e_row = (!is_diag && left_over_up) ? e_row : (u32)(w.i + j0 + t);
    if (FINAL && last_col) {  // UP keeps the entry of the cell above
        e_col = (is_diag || left_over_up) ? (u32)(w.i + lb) : e_col;
        up_at_lb = !is_diag && !left_over_up;
    }
    // Last match of this move: DIAG -> A[i-1] if it equals B[j-1]; LEFT -> B[j-1];
    // UP -> A[i-1].
    w.last = is_diag ? (eq_a ? w.a : NO_LETTER) : (left_over_up ? bt : w.a);
    w.diag_h = h;
    w.diag_w1 = w1;
    h = w.left_h = nh;
    w1 = w.left_w1 = n1;
    if constexpr (FULL) {
        w.diag_w2 = w2;
        w2 = w.left_w2 = n2;
    }
}

template <bool FULL, bool FINAL, bool LAST_ROW>
__device__ __forceinline__ void row(const int (&b)[STRIP], const bool (&last_col)[STRIP],
                                    int j0, int lb, Walk& w, double (&h)[STRIP],
                                    u32 (&w1)[STRIP], u32 (&w2)[STRIP], u32& e_row,
                                    u32& e_col, bool& up_at_lb)
{
#pragma unroll
    for (int t = 0; t < STRIP; t++)
        cell<FULL, FINAL, LAST_ROW>(t, b[t], last_col[t], j0, lb, w, h[t], w1[t], w2[t],
                                    e_row, e_col, up_at_lb);
}

// ROWS rows together, each one column behind the one above: cells (i, t), (i+1, t-1), ...
// depend on nothing of each other, so the thread has ROWS dependency chains to overlap.
template <bool FULL, bool FINAL>
__device__ __forceinline__ void rows(const int (&b)[STRIP], const bool (&last_col)[STRIP],
                                     int j0, int lb, Walk (&w)[ROWS], double (&h)[STRIP],
                                     u32 (&w1)[STRIP], u32 (&w2)[STRIP], u32& e_row,
                                     u32& e_col, bool& up_at_lb)
{
#pragma unroll
    for (int s = 0; s < STRIP + ROWS - 1; s++) {
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            const int t = s - r;
            if (t >= 0 && t < STRIP)
                cell<FULL, FINAL, false>(t, b[t], last_col[t], j0, lb, w[r], h[t], w1[t],
                                         w2[t], e_row, e_col, up_at_lb);
        }
    }
}

template <bool FULL>
__device__ __forceinline__ RowStart read_boundary(const Boundary& bnd, size_t at)
{
    return {bnd.h[at], bnd.w1[at], FULL ? bnd.w2[at] : 0u, bnd.last[at]};
}

template <bool FULL>
__device__ __forceinline__ void write_boundary(const Boundary& bnd, size_t at, const Walk& w)
{
    bnd.h[at] = w.left_h;
    bnd.w1[at] = w.left_w1;
    if (FULL) bnd.w2[at] = w.left_w2;
    bnd.last[at] = (unsigned char)w.last;
}

// One strip: columns j0 .. j0+STRIP-1 over all rows.
template <bool FULL, bool FINAL>
__device__ __forceinline__ void strip(const unsigned char* A, const unsigned char* B, int la,
                                      int lb, int j0, const double* s_subst, Boundary bnd,
                                      size_t stride, u32& e_row, double* out_h, u64* out_p)
{
    int b[STRIP];
    bool last_col[STRIP];
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        const int j = j0 + t;
        b[t] = LETTER((!FINAL || j <= lb) ? B[j - 1] : 0);  // columns past lb are computed, ignored
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
    // (i-1, j0-1), the up-left cell of row i's first cell: row 0 here
    double up_left_h = GAP * (j0 - 1);
    u32 up_left_w1 = 0u, up_left_w2 = NO_ALIGNED_PAIR;
    u32 e_col = (u32)lb;  // row 0 of column lb is its own entry
    bool up_at_lb = false;
    // The left boundary and A's letters of the next ROWS rows are read while the rows
    // before them are computed (a global load takes longer than a row); past the last row
    // the reads repeat it. next[r] holds row i + r (at most la).
    RowStart next[ROWS];
    int next_a[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; r++) {
        const int at = min(1 + r, la);
        next[r] = read_boundary<FULL>(bnd, (size_t)at * stride);
        next_a[r] = LETTER(A[at - 1]);
    }
    int i = 1;
    for (; i + ROWS - 1 < la; i += ROWS) {  // ROWS rows at a time, all before the last row
        Walk w[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; r++) {
            w[r] = walk(next[r], up_left_h, up_left_w1, up_left_w2, next_a[r], s_subst, i + r, j0);
            up_left_h = next[r].h;
            up_left_w1 = next[r].w1;
            up_left_w2 = next[r].w2;
            const int at = min(i + ROWS + r, la);
            next[r] = read_boundary<FULL>(bnd, (size_t)at * stride);
            next_a[r] = LETTER(A[at - 1]);
        }
        rows<FULL, FINAL>(b, last_col, j0, lb, w, h, w1, w2, e_row, e_col, up_at_lb);
        if (!FINAL) {
#pragma unroll
            for (int r = 0; r < ROWS; r++) write_boundary<FULL>(bnd, (size_t)(i + r) * stride, w[r]);
        }
    }
    for (; i < la; i++) {  // the rows left before the last one, one at a time
        Walk w = walk(next[0], up_left_h, up_left_w1, up_left_w2, next_a[0], s_subst, i, j0);
        up_left_h = next[0].h;
        up_left_w1 = next[0].w1;
        up_left_w2 = next[0].w2;
#pragma unroll
        for (int r = 0; r + 1 < ROWS; r++) {
            next[r] = next[r + 1];
            next_a[r] = next_a[r + 1];
        }
        row<FULL, FINAL, false>(b, last_col, j0, lb, w, h, w1, w2, e_row, e_col, up_at_lb);
        if (!FINAL) write_boundary<FULL>(bnd, (size_t)i * stride, w);
    }
    Walk w = walk(next[0], up_left_h, up_left_w1, up_left_w2, next_a[0], s_subst, la, j0);
    row<FULL, FINAL, true>(b, last_col, j0, lb, w, h, w1, w2, e_row, e_col, up_at_lb);
    if (FINAL) {  // column lb: turn the counts into SeqDist's (see the top of this file)
#pragma unroll
        for (int t = 0; t < STRIP; t++) {
            if (j0 + t == lb) {
                const u32 entry = up_at_lb ? e_col : e_row;
                const u32 aligned_pairs = w1[t] & 0xFFFFu, matches = w1[t] >> 16;
                const u64 counts = (u64)(entry - aligned_pairs) | ((u64)matches << 16);
                *out_h = h[t];
                if (FULL) {
                    const u32 first_pos = w2[t] & 0xFFFFu, last_pos = w2[t] >> 16;
                    const bool none = first_pos == NO_ALIGNED_PAIR;
                    const u64 first = none ? 0xFFFFu : first_pos - 1u;
                    const u64 last_len = none ? 0u : last_pos - aligned_pairs;
                    *out_p = counts | (first << 32) | (last_len << 48);
                } else {  // the screen: aligned pairs instead of first and last
                    *out_p = counts | ((u64)aligned_pairs << 32);
                }
            }
        }
    } else {
        write_boundary<FULL>(bnd, (size_t)la * stride, w);
    }
}

template <bool FULL>
__device__ __forceinline__ void align_pair(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const double* __restrict__ subst, double* __restrict__ bnd_h, u32* __restrict__ bnd_w1,
    u32* __restrict__ bnd_w2, unsigned char* __restrict__ bnd_last,
    double* __restrict__ out_cost, u64* __restrict__ out_packed)
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
    const Boundary bnd = {bnd_h + k, bnd_w1 + k, FULL ? bnd_w2 + k : nullptr, bnd_last + k};
    const size_t stride = (size_t)npairs;
    // Column 0 as the first strip's boundary: H(i, 0) = 15 i, UP moves (last match A[i-1]).
    for (int i = 1; i <= la; i++) {
        const size_t at = (size_t)i * stride;
        bnd.h[at] = GAP * i;
        bnd.w1[at] = 0u;
        if (FULL) bnd.w2[at] = NO_ALIGNED_PAIR;
        bnd.last[at] = (unsigned char)LETTER(A[i - 1]);
    }
    u32 e_row = (u32)la;  // (la, 0) is on the last row: its own entry
    int j0 = 1;
    for (; j0 + STRIP <= lb; j0 += STRIP)
        strip<FULL, false>(A, B, la, lb, j0, s_subst, bnd, stride, e_row, nullptr, nullptr);
    strip<FULL, true>(A, B, la, lb, j0, s_subst, bnd, stride, e_row, out_cost + k,
                      out_packed + k);
}

// Cost and packed counts (length, matches, first, last) of each pair (pa[k], pb[k]).
extern "C" __global__ void seqdist_pairs(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const double* __restrict__ subst,  // 4 x 4, the scheme's subst (letter codes of scoring/alphabet.py)
    double* __restrict__ bnd_h, u32* __restrict__ bnd_w1, u32* __restrict__ bnd_w2,
    unsigned char* __restrict__ bnd_last, double* __restrict__ out_cost,
    u64* __restrict__ out_packed)
{
    align_pair<true>(codes, offsets, pa, pb, npairs, subst, bnd_h, bnd_w1, bnd_w2, bnd_last,
                     out_cost, out_packed);
}

// Cost and packed counts (length, matches, aligned pairs) of each pair: the screen.
extern "C" __global__ void seqdist_screen(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const double* __restrict__ subst, double* __restrict__ bnd_h, u32* __restrict__ bnd_w1,
    unsigned char* __restrict__ bnd_last, double* __restrict__ out_cost,
    u64* __restrict__ out_packed)
{
    align_pair<false>(codes, offsets, pa, pb, npairs, subst, bnd_h, bnd_w1, nullptr, bnd_last,
                      out_cost, out_packed);
}
