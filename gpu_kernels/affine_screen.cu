// The exact screen of the affine all-pairs pass (docs/pruning.md, "Affine schemes"): per
// pair the optimal global score under an AffineScheme (as affine.cu computes it) and,
// among the alignments with that score, the largest weight ALPHA x matches - BETA x
// mismatches (gap columns weigh nothing), as tests/reference_affine.screen defines it.
//
// Each state is one 32-bit integer, score * 65536 + weight, the weight within +-2^15 and
// the score within 16 bits (backends/gpu/affine.screener checks both), so that the order
// (the higher score, then the larger weight) is the integers' order and every choice is a
// DPX maximum, as in affine.cu.
//
// Layout: every thread of a block aligns its own A (rows) against the block's one B
// (columns; the host groups the pairs so, padding each group to whole blocks). B's
// columns go in strips of STRIP: the block writes the strip's profile to shared memory,
// for every letter the packed diagonal steps against the strip's columns (the score
// << 16, plus ALPHA for the same letter or -BETA), and a thread reads its row letter's
// STRIP steps with loads of LOAD bytes (16, 8 or 4) a row; H and F of the strip stay in
// registers while it walks down its rows, and the strip's last column (H, E) goes to a
// [row][pair] buffer, read AHEAD rows before the row that uses it (the buffer lives in
// device memory, whose latency is several rows' work). Threads of a warp read the rows of different
// letters: 4-byte loads never meet in a bank (the rows' odd stride), wider ones do for
// letters 8 (16 bytes) or 16 (8 bytes) apart, but take fewer instructions.
#ifndef STRIP
#define STRIP 16
#endif
#ifndef LOAD
#define LOAD 16
#endif
#ifndef AHEAD
#define AHEAD 4  // rows whose left boundary is read before they are computed
#endif
#if STRIP % 4 != 0 || (LOAD != 4 && LOAD != 8 && LOAD != 16)
#error "STRIP must be a multiple of 4, LOAD 4, 8 or 16"
#endif
#define MAX_LETTERS 32
#define PER (LOAD / 4)  // steps a load
// a letter's row of the profile in loads, odd: rows of different letters start in
// different banks
#define STRIDE ((STRIP / PER) | 1)

__device__ __forceinline__ int add_max(int a, int b, int c) { return __viaddmax_s32(a, b, c); }
__device__ __forceinline__ int max3(int a, int b, int c) { return __vimax3_s32(a, b, c); }

struct Costs {  // gap steps as subtracted, packed: open + extend, and extend
    int open_ext, ext;
};

__device__ __forceinline__ int border(int end_open, int end_extend, int k)
{
    return (-end_open - k * end_extend) * 65536;  // a terminal gap of k letters, weight 0
}

// The block's profile of B's columns j0 .. j0 + STRIP - 1 (columns past lb: any letter;
// they are never read out).
__device__ __forceinline__ void build_profile(int* s_prof, const unsigned char* B, int lb,
                                              int j0, const int* subst, int letters,
                                              int alpha, int beta)
{
    for (int e = threadIdx.x; e < letters * STRIP; e += blockDim.x) {
        const int a = e / STRIP, t = e % STRIP, j = j0 + t;
        const int b = j <= lb ? B[j - 1] : 0;
        s_prof[a * STRIDE * PER + t] = subst[a * letters + b] * 65536 + (a == b ? alpha : -beta);
    }
}

// Steps q * PER .. q * PER + PER - 1 of a letter's profile row.
__device__ __forceinline__ void load_steps(const int* row, int q, int (&step)[PER])
{
#if LOAD == 16
    const int4 v = ((const int4*)row)[q];
    step[0] = v.x; step[1] = v.y; step[2] = v.z; step[3] = v.w;
#elif LOAD == 8
    const int2 v = ((const int2*)row)[q];
    step[0] = v.x; step[1] = v.y;
#else
    step[0] = row[q];
#endif
}

// One row through the strip. hz: its horizontal gap steps (the last row's are terminal).
template <bool FINAL>
__device__ __forceinline__ void row(const int* s_prof, int a, const bool (&last_col)[STRIP],
                                    Costs hz, Costs interior, Costs end, int& left_h,
                                    int& left_e, int diag_h, int (&h)[STRIP], int (&f)[STRIP])
{
    const int* p = s_prof + a * STRIDE * PER;
#pragma unroll
    for (int q = 0; q < STRIP / PER; q++) {
        int step[PER];
        load_steps(p, q, step);
#pragma unroll
        for (int u = 0; u < PER; u++) {
            const int t = PER * q + u;
            const Costs vt = (FINAL && last_col[t]) ? end : interior;
            const int e = add_max(left_h, -hz.open_ext, left_e - hz.ext);  // horizontal gap
            const int nf = add_max(h[t], -vt.open_ext, f[t] - vt.ext);      // vertical gap
            const int nh = max3(diag_h + step[u], e, nf);
            diag_h = h[t];
            h[t] = left_h = nh;
            f[t] = nf;
            left_e = e;
        }
    }
}

template <bool FINAL>
__device__ __forceinline__ void strip(const int* s_prof, const unsigned char* A, int la,
                                      int lb, int j0, Costs interior, Costs end, int end_open,
                                      int end_extend, int neg, int* bnd_h, int* bnd_e,
                                      size_t stride, int* out_score, int* out_weight)
{
    bool last_col[STRIP];
    int h[STRIP], f[STRIP];
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        last_col[t] = FINAL && j0 + t == lb;
        h[t] = border(end_open, end_extend, j0 + t);  // row 0: a terminal gap along the top
        f[t] = neg;
    }
    int up_left = j0 == 1 ? 0 : border(end_open, end_extend, j0 - 1);
    // The left boundary and A's letters are read AHEAD rows before the rows that use them
    // (a global load takes several rows' work); past the last row the reads repeat it.
    // Slot r holds row i + r (at most la).
    int next_h[AHEAD], next_e[AHEAD], next_a[AHEAD];
#pragma unroll
    for (int r = 0; r < AHEAD; r++) {
        const int at = min(1 + r, la);
        next_h[r] = bnd_h[(size_t)at * stride];
        next_e[r] = bnd_e[(size_t)at * stride];
        next_a[r] = A[at - 1];
    }
    int i = 1;
    for (; i + AHEAD <= la; i += AHEAD) {  // AHEAD rows at a time, all before the last row
#pragma unroll
        for (int r = 0; r < AHEAD; r++) {
            int left_h = next_h[r], left_e = next_e[r];
            const int a = next_a[r], diag_h = up_left;
            up_left = next_h[r];
            const int at = min(i + r + AHEAD, la);
            next_h[r] = bnd_h[(size_t)at * stride];
            next_e[r] = bnd_e[(size_t)at * stride];
            next_a[r] = A[at - 1];
            row<FINAL>(s_prof, a, last_col, interior, interior, end, left_h, left_e, diag_h, h, f);
            if (!FINAL) {
                bnd_h[(size_t)(i + r) * stride] = left_h;
                bnd_e[(size_t)(i + r) * stride] = left_e;
            }
        }
    }
    for (; i < la; i++) {  // the rows left before the last one
        int left_h = next_h[0], left_e = next_e[0];
        const int a = next_a[0], diag_h = up_left;
        up_left = next_h[0];
#pragma unroll
        for (int r = 0; r + 1 < AHEAD; r++) {
            next_h[r] = next_h[r + 1];
            next_e[r] = next_e[r + 1];
            next_a[r] = next_a[r + 1];
        }
        row<FINAL>(s_prof, a, last_col, interior, interior, end, left_h, left_e, diag_h, h, f);
        if (!FINAL) {
            bnd_h[(size_t)i * stride] = left_h;
            bnd_e[(size_t)i * stride] = left_e;
        }
    }
    int left_h = next_h[0], left_e = next_e[0];
    row<FINAL>(s_prof, next_a[0], last_col, end, interior, end, left_h, left_e, up_left, h, f);
    if (FINAL) {
#pragma unroll
        for (int t = 0; t < STRIP; t++) {
            if (last_col[t]) {
                const int score = (h[t] + 32768) >> 16;  // the weight is within +-2^15
                *out_score = score;
                *out_weight = h[t] - score * 65536;
            }
        }
    } else {
        bnd_h[(size_t)la * stride] = left_h;
        bnd_e[(size_t)la * stride] = left_e;
    }
}

// pa[k] is A, pb[k] is B; every block's pairs have the same B (the host's grouping).
// subst: letters x letters (scoring/alphabet.py's codes); the gap steps packed
// (score << 16, weight 0); end_open, end_extend plain for the borders; neg: the packed
// impossible state.
extern "C" __global__ void affine_screen(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const int* __restrict__ subst, const int letters, const int alpha, const int beta,
    const int gap_open_ext, const int gap_ext, const int end_open_ext, const int end_ext,
    const int end_open, const int end_extend, const int neg, int* __restrict__ bnd_h,
    int* __restrict__ bnd_e, int* __restrict__ out_score, int* __restrict__ out_weight)
{
    __shared__ int4 s_words[(MAX_LETTERS * STRIDE * PER + 3) / 4];  // 16-byte aligned
    int* s_prof = (int*)s_words;
    const int first = blockIdx.x * blockDim.x, k = first + threadIdx.x;
    const bool mine = k < npairs;  // threads past the last pair only build profiles
    const long long y = pb[first], x = pa[mine ? k : first];
    const unsigned char* A = codes + offsets[x];
    const unsigned char* B = codes + offsets[y];
    const int la = (int)(offsets[x + 1] - offsets[x]);
    const int lb = (int)(offsets[y + 1] - offsets[y]);
    const Costs interior = {gap_open_ext, gap_ext}, end = {end_open_ext, end_ext};
    const size_t stride = (size_t)npairs;
    int* h_col = bnd_h + k;
    int* e_col = bnd_e + k;
    if (mine) {  // column 0 as the first strip's boundary: a terminal gap down the left side
        for (int i = 1; i <= la; i++) {
            h_col[(size_t)i * stride] = border(end_open, end_extend, i);
            e_col[(size_t)i * stride] = neg;
        }
    }
    int j0 = 1;
    for (; j0 + STRIP <= lb; j0 += STRIP) {
        __syncthreads();  // every thread is done with the last strip's profile
        build_profile(s_prof, B, lb, j0, subst, letters, alpha, beta);
        __syncthreads();
        if (mine)
            strip<false>(s_prof, A, la, lb, j0, interior, end, end_open, end_extend, neg,
                         h_col, e_col, stride, nullptr, nullptr);
    }
    __syncthreads();
    build_profile(s_prof, B, lb, j0, subst, letters, alpha, beta);
    __syncthreads();
    if (mine)
        strip<true>(s_prof, A, la, lb, j0, interior, end, end_open, end_extend, neg, h_col,
                    e_col, stride, out_score + k, out_weight + k);
}
