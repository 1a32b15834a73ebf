// Integer affine global alignment (scoring/affine.py's AffineScheme) with the counts of
// the path vsearch's traceback takes (backends/cpu/trace_affine.py's tie rules), one
// thread per pair, without a traceback: the counts the filter's identities need
// (tests/reference_affine.py's vsearch_counts is the plain version of this recurrence).
//
// The traceback follows one pointer per state (H, E, F) of a cell, so the path it takes
// from a state is fixed when the state is computed: each state carries that path's counts
// and H(la, lb) carries the alignment's. A state is four words:
//   s   score (int32; the scheme's bounds keep every value far inside it)
//   w1  aligned pairs D | matches M << 16
//   w2  gap runs O | lead << 16, lead = the first run's columns when it is a gap run (the
//       border run the path leaves row 0 or column 0 by)
//   w3  the current gap run's columns | its direction << 16 (0 none, 1 horizontal, 2
//       vertical)
// Lengths stay below 2^14 (limits.py: MAX_LENGTH), so no field carries into the next.
// Choices, strict as vsearch's: E and F extend only when that scores more than opening
// from H; H takes F when F > D, then E when E > both.
//
// Layout as in affine.cu: B's columns in vertical strips of STRIP columns kept in
// registers while the thread walks down A's rows; the strip's last column (H and E, four
// words each) goes to a [word][row][pair] boundary buffer, read one row ahead.
// Substitution scores fit int8: a column word holds its letter's four scores, and a byte
// permute with sign extension picks the row letter's.
#ifndef STRIP
#define STRIP 8
#endif

typedef unsigned int u32;

#define NEG_SCORE (-(1 << 30))  // score of an impossible state (scoring/affine.py's NEG)
#define HORIZONTAL (1u << 16)
#define VERTICAL (2u << 16)
#define DIRECTION 0xFFFF0000u
#define WORDS 8  // boundary words per row: H's four, E's four

struct State {
    int s;
    u32 w1, w2, w3;
};

struct Costs {  // a gap's steps: open + extend, extend
    int open_ext, ext;
};

// The gap state from `from` (opening) or `run` (extending) in `direction`: extending only
// when strictly better; opening starts a new run unless `from` ends with one this way.
__device__ __forceinline__ State gap(const State& from, const State& run, Costs c, u32 direction)
{
    const int extended = run.s - c.ext, opened = from.s - c.open_ext;
    if (extended > opened) return {extended, run.w1, run.w2, run.w3 + 1u};
    const bool same = (from.w3 & DIRECTION) == direction;
    return {opened, from.w1, from.w2 + (same ? 0u : 1u), (same ? from.w3 : direction) + 1u};
}

// Sign-extended byte `a` of a column word: the substitution score of row letter a.
__device__ __forceinline__ u32 score_selector(int a)
{
    const u32 sign = 0x8u | (u32)a;
    return (u32)a | (sign << 4) | (sign << 8) | (sign << 12);
}

__device__ __forceinline__ int substitution(u32 col, u32 selector)
{
    u32 r;
    asm("prmt.b32 %0, %1, 0, %2;" : "=r"(r) : "r"(col), "r"(selector));
    return (int)r;
}

__device__ __forceinline__ State border(int score, u32 run, u32 direction)
{  // H on row 0 or column 0: one gap run of `run` columns from (0, 0)
    return {score, 0u, run ? 1u | (run << 16) : 0u, run | (run ? direction : 0u)};
}

struct Walk {  // a row's walk through a strip: the cells to its left and up-left
    State left_h, left_e, diag;
    int a;
    u32 selector;
};

template <bool FINAL, bool LAST_ROW>
__device__ __forceinline__ void row(const u32 (&col)[STRIP], const int (&b)[STRIP],
                                    const bool (&last_col)[STRIP], Costs interior, Costs end,
                                    Walk& w, State (&h)[STRIP], State (&f)[STRIP])
{
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        const State e = gap(w.left_h, w.left_e, LAST_ROW ? end : interior, HORIZONTAL);
        const State nf = gap(h[t], f[t], (FINAL && last_col[t]) ? end : interior, VERTICAL);
        State nh = {w.diag.s + substitution(col[t], w.selector),
                    w.diag.w1 + (b[t] == w.a ? 0x10001u : 1u), w.diag.w2, 0u};
        if (nf.s > nh.s) nh = nf;
        if (e.s > nh.s) nh = e;
        w.diag = h[t];
        h[t] = w.left_h = nh;
        f[t] = nf;
        w.left_e = e;
    }
}

__device__ __forceinline__ State read_state(const int* at, size_t plane)
{
    return {at[0], (u32)at[plane], (u32)at[2 * plane], (u32)at[3 * plane]};
}

__device__ __forceinline__ void write_state(int* at, size_t plane, const State& v)
{
    at[0] = v.s;
    at[plane] = (int)v.w1;
    at[2 * plane] = (int)v.w2;
    at[3 * plane] = (int)v.w3;
}

template <bool FINAL>
__device__ __forceinline__ void strip(const unsigned char* A, const unsigned char* B, int la,
                                      int lb, int j0, const int* s_subst, Costs interior,
                                      Costs end, int end_open, int end_extend, int* bnd,
                                      size_t stride, size_t plane, State* out)
{
    u32 col[STRIP];
    int b[STRIP];
    bool last_col[STRIP];
    State h[STRIP], f[STRIP];
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        const int j = j0 + t;
        b[t] = (!FINAL || j <= lb) ? B[j - 1] : 0;  // columns past lb: computed, ignored
        col[t] = (u32)(s_subst[b[t]] & 0xFF) | ((u32)(s_subst[4 + b[t]] & 0xFF) << 8)
                 | ((u32)(s_subst[8 + b[t]] & 0xFF) << 16)
                 | ((u32)(s_subst[12 + b[t]] & 0xFF) << 24);
        last_col[t] = FINAL && j == lb;
        h[t] = border(-end_open - j * end_extend, (u32)j, HORIZONTAL);  // row 0
        f[t] = {NEG_SCORE, 0u, 0u, 0u};
    }
    // (0, j0 - 1), the up-left cell of row 1's first cell
    State up_left = j0 == 1 ? border(0, 0u, 0u)
                            : border(-end_open - (j0 - 1) * end_extend, (u32)(j0 - 1), HORIZONTAL);
    State next_h = read_state(bnd + stride, plane);
    State next_e = read_state(bnd + 4 * plane + stride, plane);
    int next_a = A[0];
    int i = 1;
    for (; i < la; i++) {  // the rows before the last one
        Walk w = {next_h, next_e, up_left, next_a, score_selector(next_a)};
        up_left = next_h;
        next_h = read_state(bnd + (size_t)(i + 1) * stride, plane);
        next_e = read_state(bnd + 4 * plane + (size_t)(i + 1) * stride, plane);
        next_a = A[i];
        row<FINAL, false>(col, b, last_col, interior, end, w, h, f);
        if (!FINAL) {
            write_state(bnd + (size_t)i * stride, plane, w.left_h);
            write_state(bnd + 4 * plane + (size_t)i * stride, plane, w.left_e);
        }
    }
    Walk w = {next_h, next_e, up_left, next_a, score_selector(next_a)};
    row<FINAL, true>(col, b, last_col, interior, end, w, h, f);
    if (FINAL) {
#pragma unroll
        for (int t = 0; t < STRIP; t++)
            if (j0 + t == lb) *out = h[t];
    } else {
        write_state(bnd + (size_t)la * stride, plane, w.left_h);
        write_state(bnd + 4 * plane + (size_t)la * stride, plane, w.left_e);
    }
}

// Per pair (pa[k] as A, pb[k] as B): the score and the words w1, w2, w3 of H(la, lb).
// subst: 4 x 4 (letter codes of scoring/alphabet.py; values within int8); the gap steps
// (open + extend, extend) inside and at the ends; end_open, end_extend for the borders;
// bnd: WORDS planes of `plane` ints (plane >= (longest A + 1) * npairs).
extern "C" __global__ void affine_counts(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const int* __restrict__ subst, const int gap_open_ext, const int gap_ext,
    const int end_open_ext, const int end_ext, const int end_open, const int end_extend,
    int* __restrict__ bnd, const long long plane, int* __restrict__ out_score,
    u32* __restrict__ out_w1, u32* __restrict__ out_w2, u32* __restrict__ out_w3)
{
    __shared__ int s_subst[16];
    if (threadIdx.x < 16) s_subst[threadIdx.x] = subst[threadIdx.x];
    __syncthreads();
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= npairs) return;
    const long long x = pa[k], y = pb[k];
    const unsigned char* A = codes + offsets[x];
    const unsigned char* B = codes + offsets[y];
    const int la = (int)(offsets[x + 1] - offsets[x]);
    const int lb = (int)(offsets[y + 1] - offsets[y]);
    const size_t stride = (size_t)npairs;
    int* const pair_bnd = bnd + k;
    // Column 0 as the first strip's boundary: a terminal gap down the left side.
    for (int i = 1; i <= la; i++) {
        write_state(pair_bnd + (size_t)i * stride, (size_t)plane,
                    border(-end_open - i * end_extend, (u32)i, VERTICAL));
        write_state(pair_bnd + 4 * (size_t)plane + (size_t)i * stride, (size_t)plane,
                    {NEG_SCORE, 0u, 0u, 0u});
    }
    const Costs interior = {gap_open_ext, gap_ext}, end = {end_open_ext, end_ext};
    State result;
    int j0 = 1;
    for (; j0 + STRIP <= lb; j0 += STRIP)
        strip<false>(A, B, la, lb, j0, s_subst, interior, end, end_open, end_extend, pair_bnd,
                     stride, (size_t)plane, nullptr);
    strip<true>(A, B, la, lb, j0, s_subst, interior, end, end_open, end_extend, pair_bnd,
                stride, (size_t)plane, &result);
    out_score[k] = result.s;
    out_w1[k] = result.w1;
    out_w2[k] = result.w2;
    out_w3[k] = result.w3;
}
