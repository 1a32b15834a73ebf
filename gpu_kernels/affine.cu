// Integer global alignment with affine gaps and separate terminal-gap costs
// (Needleman-Wunsch-Gotoh), one thread per pair: the best score and the length of the
// shortest alignment with it, exactly as src/seqpairs/scoring/affine.py specifies and
// src/seqpairs/backends/cpu/affine.py computes.
//
// Each state is one integer, score << SHIFT | D, D the aligned pairs of its path. A path
// to cell (i, j) has i + j - D columns, so at equal scores the larger D is the shorter
// alignment: the spec's order is the integers' order, every choice is a plain maximum, and
// Hopper's DPX instructions do a cell in seven: E and F each one add-then-max after one
// add, H one three-way max after one add, and a byte permute that turns the substitution
// score into the diagonal step score << 16 | 1. Packed is int with SHIFT 16 when every
// value of the launch fits a 16-bit score (backends/gpu/affine.py checks a bound), long long with SHIFT
// 32 otherwise (the same code, no DPX). The length is la + lb - D at the end.
//
// Layout as in seqdist.cu: B's columns in vertical strips of STRIP columns kept in
// registers while the thread walks down A's rows; the strip's last column (H and E) goes
// to a [row][pair] boundary buffer, read AHEAD rows before the row that uses it (the
// buffer lives in device memory, whose latency is several rows' work). (Two rows in flight, as in
// seqdist.cu, measured slower here: the registers they need cost occupancy or strip width.)
//
// Substitution scores must fit int8: for each strip column the four scores of its letter
// against the four letters (codes 0-3) are packed in one word, and a cell picks its row letter's byte with
// one byte permute.
#ifndef STRIP
#define STRIP 16
#endif
#ifndef AHEAD
#define AHEAD 4  // rows whose left boundary is read before they are computed
#endif

typedef unsigned int u32;

template <typename Packed> struct Shift;
template <> struct Shift<int> { static constexpr int value = 16; };
template <> struct Shift<long long> { static constexpr int value = 32; };

template <typename Packed>
__device__ __forceinline__ Packed pack(long long score, int aligned_pairs)
{
    return (Packed)(score * ((Packed)1 << Shift<Packed>::value)) + aligned_pairs;
}

// max(a + b, c) and max(a, b, c): one DPX instruction each on 32 bits.
__device__ __forceinline__ int add_max(int a, int b, int c) { return __viaddmax_s32(a, b, c); }
__device__ __forceinline__ long long add_max(long long a, long long b, long long c)
{
    return max(a + b, c);
}
__device__ __forceinline__ int max3(int a, int b, int c) { return __vimax3_s32(a, b, c); }
__device__ __forceinline__ long long max3(long long a, long long b, long long c)
{
    return max(max(a, b), c);
}

template <typename Packed>
struct Costs {  // gap steps as subtracted, packed: open + extend, and extend
    Packed open_ext, ext;
};

template <typename Packed>
struct Boundary {  // the column left of the current strip, [row][pair]
    Packed* h;
    Packed* e;
};

// prmt selector for the diagonal step of row letter a: byte a of a column word
// (sign-extended) as the score in the upper half, 1 aligned pair below. Selector nibbles
// pick result bytes 0..3 from {column word bytes 0-3, 0x00000001 bytes 4-7}; bit 3 of a
// nibble replicates the picked byte's sign.
__device__ __forceinline__ u32 step_selector(int a)
{
    return 0x4u | (0x5u << 4) | ((u32)a << 8) | ((0x8u | (u32)a) << 12);
}

// The diagonal step for the row letter that `selector` encodes.
template <typename Packed>
__device__ __forceinline__ Packed diag_step(u32 col, u32 selector);

template <>
__device__ __forceinline__ int diag_step<int>(u32 col, u32 selector)
{
    u32 r;
    asm("prmt.b32 %0, %1, 1, %2;" : "=r"(r) : "r"(col), "r"(selector));
    return (int)r;
}

template <>
__device__ __forceinline__ long long diag_step<long long>(u32 col, u32 selector)
{
    // the same permute gives score << 16 | 1; shift the (sign-extended) score up 16 more
    const int half = diag_step<int>(col, selector);
    return pack<long long>(half >> 16, 1);
}

// A row's walk through a strip: the cells to its left and up-left, its letter's selector.
template <typename Packed>
struct Walk {
    Packed left_h, left_e, diag_h;
    u32 selector;
};

// Cell (i, j0 + t) of the row that `w` walks; h[t]/f[t] hold the cell above on entry and
// this cell on return. hz: the row's horizontal gap steps.
template <typename Packed, bool FINAL>
__device__ __forceinline__ void cell(int t, const u32 (&col)[STRIP],
                                     const bool (&last_col)[STRIP], Costs<Packed> hz,
                                     Costs<Packed> interior, Costs<Packed> end, Walk<Packed>& w,
                                     Packed (&h)[STRIP], Packed (&f)[STRIP])
{
    const Costs<Packed> vt = (FINAL && last_col[t]) ? end : interior;
    const Packed e = add_max(w.left_h, -hz.open_ext, w.left_e - hz.ext);  // horizontal gap
    const Packed nf = add_max(h[t], -vt.open_ext, f[t] - vt.ext);        // vertical gap
    const Packed nh = max3(w.diag_h + diag_step<Packed>(col[t], w.selector), e, nf);
    w.diag_h = h[t];
    h[t] = w.left_h = nh;
    f[t] = nf;
    w.left_e = e;
}

// One row through the strip; LAST_ROW: its horizontal gaps are terminal.
template <typename Packed, bool FINAL, bool LAST_ROW>
__device__ __forceinline__ void row(const u32 (&col)[STRIP], const bool (&last_col)[STRIP],
                                    Costs<Packed> interior, Costs<Packed> end,
                                    Walk<Packed>& w, Packed (&h)[STRIP], Packed (&f)[STRIP])
{
#pragma unroll
    for (int t = 0; t < STRIP; t++)
        cell<Packed, FINAL>(t, col, last_col, LAST_ROW ? end : interior, interior, end, w, h, f);
}

template <typename Packed, bool FINAL>
__device__ __forceinline__ void strip(const unsigned char* A, const unsigned char* B, int la,
                                      int lb, int j0, const int* s_subst,
                                      Costs<Packed> interior, Costs<Packed> end, int end_open,
                                      int end_extend, Packed neg, Boundary<Packed> bnd,
                                      size_t stride, int* out_score, int* out_length)
{
    u32 col[STRIP];
    bool last_col[STRIP];
    Packed h[STRIP], f[STRIP];
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        const int j = j0 + t;
        const int b = (!FINAL || j <= lb) ? B[j - 1] : 0;  // columns past lb: ignored
        col[t] = (u32)(s_subst[b] & 0xFF) | ((u32)(s_subst[4 + b] & 0xFF) << 8)
                 | ((u32)(s_subst[8 + b] & 0xFF) << 16) | ((u32)(s_subst[12 + b] & 0xFF) << 24);
        last_col[t] = FINAL && j == lb;
        // row 0: a terminal gap along the top, H(0, j) = -(end_open + j end_extend)
        h[t] = pack<Packed>(-(long long)end_open - (long long)j * end_extend, 0);
        f[t] = neg;
    }
    // (i-1, j0-1), the up-left cell of row i's first cell: row 0 here
    Packed up_left = j0 == 1 ? 0 : pack<Packed>(-(long long)end_open - (j0 - 1LL) * end_extend, 0);
    // The left boundary and A's letters are read AHEAD rows before the rows that use them
    // (a global load takes several rows' work); past the last row the reads repeat it.
    // Slot r holds row i + r (at most la).
    Packed next_h[AHEAD], next_e[AHEAD];
    int next_a[AHEAD];
#pragma unroll
    for (int r = 0; r < AHEAD; r++) {
        const int at = min(1 + r, la);
        next_h[r] = bnd.h[(size_t)at * stride];
        next_e[r] = bnd.e[(size_t)at * stride];
        next_a[r] = A[at - 1];
    }
    int i = 1;
    for (; i + AHEAD <= la; i += AHEAD) {  // AHEAD rows at a time, all before the last row
#pragma unroll
        for (int r = 0; r < AHEAD; r++) {
            Walk<Packed> w = {next_h[r], next_e[r], up_left, step_selector(next_a[r])};
            up_left = next_h[r];
            const int at = min(i + r + AHEAD, la);
            next_h[r] = bnd.h[(size_t)at * stride];
            next_e[r] = bnd.e[(size_t)at * stride];
            next_a[r] = A[at - 1];
            row<Packed, FINAL, false>(col, last_col, interior, end, w, h, f);
            if (!FINAL) {
                bnd.h[(size_t)(i + r) * stride] = w.left_h;
                bnd.e[(size_t)(i + r) * stride] = w.left_e;
            }
        }
    }
    for (; i < la; i++) {  // the rows left before the last one
        Walk<Packed> w = {next_h[0], next_e[0], up_left, step_selector(next_a[0])};
        up_left = next_h[0];
#pragma unroll
        for (int r = 0; r + 1 < AHEAD; r++) {
            next_h[r] = next_h[r + 1];
            next_e[r] = next_e[r + 1];
            next_a[r] = next_a[r + 1];
        }
        row<Packed, FINAL, false>(col, last_col, interior, end, w, h, f);
        if (!FINAL) {
            bnd.h[(size_t)i * stride] = w.left_h;
            bnd.e[(size_t)i * stride] = w.left_e;
        }
    }
    Walk<Packed> w = {next_h[0], next_e[0], up_left, step_selector(next_a[0])};
    row<Packed, FINAL, true>(col, last_col, interior, end, w, h, f);
    if (FINAL) {
        constexpr int shift = Shift<Packed>::value;
#pragma unroll
        for (int t = 0; t < STRIP; t++) {
            if (j0 + t == lb) {
                *out_score = (int)(h[t] >> shift);
                *out_length = la + lb - (int)(h[t] & (((Packed)1 << shift) - 1));
            }
        }
    } else {
        bnd.h[(size_t)la * stride] = w.left_h;
        bnd.e[(size_t)la * stride] = w.left_e;
    }
}

template <typename Packed>
__device__ __forceinline__ void align_pair(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const int* __restrict__ subst, const Costs<Packed> interior, const Costs<Packed> end,
    const int end_open, const int end_extend, const Packed neg, Packed* __restrict__ bnd_h,
    Packed* __restrict__ bnd_e, int* __restrict__ out_score, int* __restrict__ out_length)
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
    const Boundary<Packed> bnd = {bnd_h + k, bnd_e + k};
    const size_t stride = (size_t)npairs;
    // Column 0 as the first strip's boundary: a terminal gap down the left side.
    for (int i = 1; i <= la; i++) {
        const size_t at = (size_t)i * stride;
        bnd.h[at] = pack<Packed>(-(long long)end_open - (long long)i * end_extend, 0);
        bnd.e[at] = neg;
    }
    int j0 = 1;
    for (; j0 + STRIP <= lb; j0 += STRIP)
        strip<Packed, false>(A, B, la, lb, j0, s_subst, interior, end, end_open, end_extend,
                             neg, bnd, stride, nullptr, nullptr);
    strip<Packed, true>(A, B, la, lb, j0, s_subst, interior, end, end_open, end_extend, neg,
                        bnd, stride, out_score + k, out_length + k);
}

// Arguments of both kernels: subst 4 x 4 (letter codes of scoring/alphabet.py; values within int8); the gap
// steps packed (backends/gpu/affine.py): interior and terminal (open + extend) << SHIFT and
// extend << SHIFT (they come packed so that the compiler keeps them in registers rather
// than fold the shift into multiply-adds); end_open and end_extend as plain integers for
// the borders; neg: the packed value of an impossible state.

// Every value of the launch within a 16-bit score (backends/gpu/affine.py checks a bound).
extern "C" __global__ void affine_pairs_32(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const int* __restrict__ subst, const int gap_open_ext, const int gap_ext,
    const int end_open_ext, const int end_ext, const int end_open, const int end_extend,
    const int neg, int* __restrict__ bnd_h, int* __restrict__ bnd_e,
    int* __restrict__ out_score, int* __restrict__ out_length)
{
    align_pair<int>(codes, offsets, pa, pb, npairs, subst, {gap_open_ext, gap_ext},
                    {end_open_ext, end_ext}, end_open, end_extend, neg, bnd_h, bnd_e,
                    out_score, out_length);
}

// Any scores of the spec (within +-2**30).
extern "C" __global__ void affine_pairs_64(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const int* __restrict__ subst, const long long gap_open_ext, const long long gap_ext,
    const long long end_open_ext, const long long end_ext, const int end_open,
    const int end_extend, const long long neg, long long* __restrict__ bnd_h,
    long long* __restrict__ bnd_e, int* __restrict__ out_score, int* __restrict__ out_length)
{
    align_pair<long long>(codes, offsets, pa, pb, npairs, subst, {gap_open_ext, gap_ext},
                          {end_open_ext, end_ext}, end_open, end_extend, neg, bnd_h, bnd_e,
                          out_score, out_length);
}
