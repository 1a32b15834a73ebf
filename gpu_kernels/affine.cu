// Integer global alignment with affine gaps and separate terminal-gap costs
// (Needleman-Wunsch-Gotoh), one thread per pair: the score and the alignment length, exactly
// as src/seqpairs/affine.py specifies and src/seqpairs/backends/cpu_affine.py computes.
//
// Layout as in seqdist.cu: B's columns in vertical strips of STRIP columns kept in
// registers while the thread walks down A's rows; the strip's last column (H, E and their
// counts) goes to a [row][pair] boundary buffer, read one row ahead.
//
// Lengths are kept as the number of aligned pairs D of each state's path: a path to (i, j)
// has i + j - D columns, so gap steps copy D and only aligned pairs add to it; the length
// is la + lb - D at the end. D <= 16383, so H's and E's share a word in the boundary.
//
// Substitution scores must fit int8: for each strip column the four scores of its letter
// against A, C, T, G are packed in one word, and a cell picks its row letter's byte with
// one byte permute.
#ifndef STRIP
#define STRIP 16
#endif

typedef unsigned int u32;

#define NEG (-(1 << 30))

struct Costs {  // gap costs as subtracted per step: open + extend, and extend
    int open_ext, ext;
};

struct Boundary {  // the column left of the current strip, [row][pair]
    int* h;
    int* e;
    u32* d;  // aligned pairs of H's path | of E's path << 16
};

// Selector for prmt that yields byte `a` sign-extended to 32 bits: result byte 0 is byte a,
// bytes 1-3 replicate its sign (a selector nibble's bit 3).
__device__ __forceinline__ u32 sign_extend_selector(int a)
{
    const u32 s = 0x8u | (u32)a;
    return (u32)a | (s << 4) | (s << 8) | (s << 12);
}

// The byte of `col` that `selector` picks, sign-extended. PTX prmt rather than
// __byte_perm, which ignores the sign-replicate bit of the selector.
__device__ __forceinline__ int pick_score(u32 col, u32 selector)
{
    u32 r;
    asm("prmt.b32 %0, %1, 0, %2;" : "=r"(r) : "r"(col), "r"(selector));
    return (int)r;
}

// Values of the cell to the left as a row walks through a strip.
struct Left {
    int h, e, dh, de;
};

template <bool FINAL, bool LAST_ROW>
__device__ __forceinline__ void row(const u32 (&col)[STRIP], const bool (&last_col)[STRIP],
                                    u32 sel_a, Costs interior, Costs end, Left& left,
                                    int& diag_h, int& diag_dh, int (&h)[STRIP],
                                    int (&f)[STRIP], int (&dh)[STRIP], int (&df)[STRIP])
{
    const Costs hz = LAST_ROW ? end : interior;
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        const Costs vt = (FINAL && last_col[t]) ? end : interior;
        // E: a horizontal gap, opened from H or extended from E of the cell to the left
        const int e_open = left.h - hz.open_ext, e_ext = left.e - hz.ext;
        const bool e_opens = e_open > e_ext;
        const int e = e_opens ? e_open : e_ext;
        const int de = e_opens ? left.dh : left.de;
        // F: a vertical gap, from the cell above
        const int f_open = h[t] - vt.open_ext, f_ext = f[t] - vt.ext;
        const bool f_opens = f_open > f_ext;
        const int nf = f_opens ? f_open : f_ext;
        const int ndf = f_opens ? dh[t] : df[t];
        // D: the aligned pair
        const int d = diag_h + pick_score(col[t], sel_a);
        // H: ties prefer D, then E, then F
        const bool take_d = d >= e && d >= nf;
        const bool take_e = !take_d && e >= nf;
        const int nh = take_d ? d : (take_e ? e : nf);
        const int ndh = take_d ? diag_dh + 1 : (take_e ? de : ndf);
        diag_h = h[t];
        diag_dh = dh[t];
        h[t] = left.h = nh;
        dh[t] = left.dh = ndh;
        f[t] = nf;
        df[t] = ndf;
        left.e = e;
        left.de = de;
    }
}

__device__ __forceinline__ Left read_left(const Boundary& bnd, size_t at)
{
    const u32 d = bnd.d[at];
    return {bnd.h[at], bnd.e[at], (int)(d & 0xFFFFu), (int)(d >> 16)};
}

__device__ __forceinline__ void write_left(const Boundary& bnd, size_t at, const Left& left)
{
    bnd.h[at] = left.h;
    bnd.e[at] = left.e;
    bnd.d[at] = (u32)left.dh | ((u32)left.de << 16);
}

template <bool FINAL>
__device__ __forceinline__ void strip(const unsigned char* A, const unsigned char* B, int la,
                                      int lb, int j0, const int* s_subst, Costs interior,
                                      Costs end, Boundary bnd, size_t stride, int* out_score,
                                      int* out_length)
{
    u32 col[STRIP];
    bool last_col[STRIP];
    int h[STRIP], f[STRIP], dh[STRIP], df[STRIP];
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        const int j = j0 + t;
        const int b = (!FINAL || j <= lb) ? B[j - 1] : 0;  // columns past lb: ignored
        col[t] = (u32)(s_subst[b] & 0xFF) | ((u32)(s_subst[4 + b] & 0xFF) << 8)
                 | ((u32)(s_subst[8 + b] & 0xFF) << 16) | ((u32)(s_subst[12 + b] & 0xFF) << 24);
        last_col[t] = FINAL && j == lb;
        // row 0: a terminal gap along the top, H(0, j) = -(end_open + j end_extend)
        h[t] = -(end.open_ext - end.ext) - j * end.ext;
        f[t] = NEG;
        dh[t] = df[t] = 0;
    }
    int diag_h = j0 == 1 ? 0 : -(end.open_ext - end.ext) - (j0 - 1) * end.ext;
    int diag_dh = 0;
    Left next = read_left(bnd, stride);
    int next_a = A[0];
    for (int i = 1; i < la; i++) {
        Left left = next;
        const int a = next_a;
        const size_t at = (size_t)i * stride;
        next = read_left(bnd, at + stride);
        next_a = A[i];
        const int boundary_h = left.h, boundary_dh = left.dh;
        row<FINAL, false>(col, last_col, sign_extend_selector(a), interior, end, left, diag_h,
                          diag_dh, h, f, dh, df);
        if (!FINAL) write_left(bnd, at, left);
        diag_h = boundary_h;
        diag_dh = boundary_dh;
    }
    Left left = next;
    row<FINAL, true>(col, last_col, sign_extend_selector(next_a), interior, end, left, diag_h,
                     diag_dh, h, f, dh, df);
    if (FINAL) {
#pragma unroll
        for (int t = 0; t < STRIP; t++) {
            if (j0 + t == lb) {
                *out_score = h[t];
                *out_length = la + lb - dh[t];
            }
        }
    } else {
        write_left(bnd, (size_t)la * stride, left);
    }
}

extern "C" __global__ void affine_pairs(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const int* __restrict__ subst,  // 4 x 4, codes A, C, T, G; values within int8
    const int gap_open, const int gap_extend, const int end_open, const int end_extend,
    int* __restrict__ bnd_h, int* __restrict__ bnd_e, u32* __restrict__ bnd_d,
    int* __restrict__ out_score, int* __restrict__ out_length)
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
    const Boundary bnd = {bnd_h + k, bnd_e + k, bnd_d + k};
    const size_t stride = (size_t)npairs;
    const Costs interior = {gap_open + gap_extend, gap_extend};
    const Costs end = {end_open + end_extend, end_extend};
    // Column 0 as the first strip's boundary: a terminal gap down the left side.
    for (int i = 1; i <= la; i++) {
        const size_t at = (size_t)i * stride;
        bnd.h[at] = -end_open - i * end_extend;
        bnd.e[at] = NEG;
        bnd.d[at] = 0u;
    }
    int j0 = 1;
    for (; j0 + STRIP <= lb; j0 += STRIP)
        strip<false>(A, B, la, lb, j0, s_subst, interior, end, bnd, stride, nullptr, nullptr);
    strip<true>(A, B, la, lb, j0, s_subst, interior, end, bnd, stride, out_score + k,
                out_length + k);
}
