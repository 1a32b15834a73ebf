// seqpairs align: the best alignment of each pair under an AlignMode (local, global,
// semi-global; src/seqpairs/scoring/local.py), one thread per pair, exactly as
// src/seqpairs/backends/cpu/align.py computes it.
//
// REVERSE 0 (align_ends): the score and the 1-based end (query, target) of each pair,
// ties to the smallest target end, then the smallest query end. REVERSE 1 (align_starts):
// the start, by aligning the prefixes up to the end backwards from it (no floor at 0),
// first cell in row-major order that reaches the score.
//
// Layout as in affine.cu: the query's columns in strips of STRIP columns kept in
// registers while the thread walks down the target's rows; the strip's right edge (H, E)
// goes to a [row][pair] buffer for the next strip. Every value is a plain int: scores of
// two MAX_LENGTH sequences stay within +-3.3e8, and minus infinity (NEG) minus any gap
// run stays far above INT_MIN.
//
// Scores: WORD 1 packs, for each strip column, its query letter's int8 scores against
// target letters 0-3 in one word, and a cell picks its target letter's byte with one byte
// permute (alphabets of at most 4 letters); WORD 0 looks them up in a shared table
// [(query letter) * letters + target letter], the pad letter's row last.
#ifndef STRIP
#define STRIP 32
#endif
#ifndef WORD
#define WORD 1
#endif
#ifndef REVERSE
#define REVERSE 0
#endif
#ifndef MAX_TABLE
#define MAX_TABLE 1024
#endif

typedef unsigned int u32;

#define NEG (-(1 << 29))
// Query columns past the query (the last strip's padding) score this against everything:
// lower than any real step, so a padded cell is always below a real cell of the same row
// or above it, and never chosen.
#define PAD_SCORE (-128)

__device__ __forceinline__ int add_max(int a, int b, int c) { return __viaddmax_s32(a, b, c); }
__device__ __forceinline__ int max3(int a, int b, int c) { return __vimax3_s32(a, b, c); }

// Cost of a gap of k >= 1 letters (opening pays the first).
__device__ __forceinline__ int gap(int k, int opening, int extend)
{
    return opening + (k - 1) * extend;
}

#if WORD
typedef u32 Column;
// The byte permute's selector that sign-extends byte b of a column word to 32 bits.
__device__ __forceinline__ u32 selector(int b)
{
    const u32 s = (u32)b | 8u;
    return (u32)b | (s << 4) | (s << 8) | (s << 12);
}
__device__ __forceinline__ int step(Column col, u32 sel, const int*)
{
    u32 r;
    asm("prmt.b32 %0, %1, 0, %2;" : "=r"(r) : "r"(col), "r"(sel));
    return (int)r;
}
__device__ __forceinline__ Column column(int a, const int* s_subst, int letters)
{
    if (a < 0) return 0x80808080u;  // PAD_SCORE in every byte
    u32 w = 0;
    for (int b = 0; b < 4; b++)
        w |= (u32)((b < letters ? s_subst[a * letters + b] : PAD_SCORE) & 0xFF) << (8 * b);
    return w;
}
#else
typedef int Column;  // the query letter's row in the shared table
__device__ __forceinline__ u32 selector(int b) { return (u32)b; }
__device__ __forceinline__ int step(Column col, u32 b, const int* s_subst)
{
    return s_subst[col + (int)b];
}
__device__ __forceinline__ Column column(int a, const int*, int letters)
{
    return (a < 0 ? letters : a) * letters;  // the pad row follows the letters' rows
}
#endif

// The block's shared score table: subst's rows, then the pad letter's row (PAD_SCORE).
__device__ __forceinline__ void load_table(int* s_subst, const int* subst, int letters)
{
    for (int x = threadIdx.x; x < (letters + 1) * letters; x += blockDim.x)
        s_subst[x] = x < letters * letters ? subst[x] : PAD_SCORE;
    __syncthreads();
}

struct Costs {
    int opening, extend;  // a gap's first letter, and each further one
};

// What a thread knows of its pair.
struct Pair {
    const unsigned char* Q;  // query letters, read forwards (or backwards from Q[m - 1])
    const unsigned char* T;  // target letters, likewise
    int m, n;                // columns and rows
    int local, free_ends;    // the mode (REVERSE: both 0 for the borders, local for the stop)
};

__device__ __forceinline__ int query_letter(const Pair& p, int j)  // 1-based column
{
    return REVERSE ? p.Q[p.m - j] : p.Q[j - 1];
}

__device__ __forceinline__ int target_letter(const Pair& p, int i)  // 1-based row
{
    return REVERSE ? p.T[p.n - i] : p.T[i - 1];
}

// The found cell: score and 1-based (row, column); row 0: none yet.
struct Found {
    int score, i, j;
};

// One strip of columns j0 + 1 .. j0 + STRIP through rows 1 .. rows; LAST: it holds column
// m. Returns the rows the next strip needs (REVERSE local: those above the cell found).
template <bool LAST>
__device__ __forceinline__ int strip(const Pair& p, int j0, int rows, const int* s_subst,
                                     int letters, Costs c, int* bnd_h, int* bnd_e,
                                     size_t stride, Found& found, int target)
{
    Column col[STRIP];
    int h[STRIP], f[STRIP];
    const bool floor_at_zero = !REVERSE && p.local;
    const int floor = floor_at_zero ? 0 : NEG;
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        const int j = j0 + t + 1;
        col[t] = column(j <= p.m ? query_letter(p, j) : -1, s_subst, letters);
        h[t] = floor_at_zero ? 0 : -gap(j, c.opening, c.extend);  // H(0, j)
        f[t] = h[t] - c.opening;                                      // F(1, j)
    }
    const int m_t = p.m - 1 - j0;  // column m's place in the strip (LAST)
    int up_left = (j0 == 0 || floor_at_zero) ? 0 : -gap(j0, c.opening, c.extend);
    const bool free_rows = floor_at_zero || (!REVERSE && p.free_ends);
    for (int i = 1; i <= rows; i++) {
        int left_h, e;
        if (j0 == 0) {
            left_h = free_rows ? 0 : -gap(i, c.opening, c.extend);  // H(i, 0)
            e = left_h - c.opening;                                  // E(i, 1)
        } else {
            left_h = bnd_h[(size_t)i * stride];
            e = bnd_e[(size_t)i * stride];
        }
        const u32 sel = selector(target_letter(p, i));
        int diag = up_left;
        up_left = left_h;
        int row_max = NEG;
#pragma unroll
        for (int t = 0; t < STRIP; t++) {
            const int d = add_max(diag, step(col[t], sel, s_subst), f[t]);  // max(diag + s, F)
            const int x = max3(d, e, floor);
            diag = h[t];
            h[t] = x;
            const int x_open = x - c.opening;
            e = add_max(e, -c.extend, x_open);     // E(i, j + 1)
            f[t] = add_max(f[t], -c.extend, x_open);  // F(i + 1, j)
            if (t & 1) row_max = max3(row_max, h[t - 1], h[t]);
        }
        if (!LAST) {
            bnd_h[(size_t)i * stride] = h[STRIP - 1];
            bnd_e[(size_t)i * stride] = e;
        }
        int at_m = NEG;
        if (LAST && !p.local) {
#pragma unroll
            for (int t = 0; t < STRIP; t++)
                if (t == m_t) at_m = h[t];
        }
#if REVERSE
        if (p.local) {  // every cell: the first reaching the target score
            if (row_max == target && (found.i == 0 || i < found.i)) {
                int first = STRIP;
#pragma unroll
                for (int t = STRIP - 1; t >= 0; t--)
                    if (h[t] == target) first = t;
                found = {target, i, j0 + first + 1};
                return i - 1;
            }
        } else if (LAST && at_m == target) {  // semi-global: column m only
            found = {target, i, p.m};
            return 0;
        }
#else
        if (p.local) {
            if (row_max > found.score || (row_max == found.score && i < found.i)) {
                int first = STRIP;
#pragma unroll
                for (int t = STRIP - 1; t >= 0; t--)
                    if (h[t] == row_max) first = t;
                found = {row_max, i, j0 + first + 1};
            }
        } else if (LAST && (p.free_ends ? at_m > found.score : i == p.n)) {
            found = {at_m, i, p.m};
        }
#endif
    }
    return rows;
}

// Arguments: codes and offsets of every sequence; per pair (k < npairs) its query and
// target (sequence indices) and, REVERSE, its score and end; subst letters x letters
// ([query letter][target letter], int8 values with WORD); the costs as in LocalScheme
// (opening = gap_open + gap_extend); the mode; the largest substitution score; the
// boundary buffers, [row][pair] with stride npairs; the outputs.
extern "C" __global__ void align_pairs(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const int* __restrict__ score_in, const int* __restrict__ qend_in,
    const int* __restrict__ tend_in, const int* __restrict__ subst, const int letters,
    const int opening, const int extend, const int local, const int free_ends,
    const int best_step,  // the largest substitution score, at least 0
    int* __restrict__ bnd_h, int* __restrict__ bnd_e, int* __restrict__ out_score,
    int* __restrict__ out_q, int* __restrict__ out_t)
{
    __shared__ int s_subst[MAX_TABLE];
    load_table(s_subst, subst, letters);
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= npairs) return;
    const long long x = pa[k], y = pb[k];
    Pair p = {codes + offsets[x], codes + offsets[y], (int)(offsets[x + 1] - offsets[x]),
              (int)(offsets[y + 1] - offsets[y]), local, free_ends};
    int target = 0;
#if REVERSE
    target = score_in[k];
    p.m = qend_in[k];
    p.n = tend_in[k];
    Found found = {target, 0, 0};
#else
    Found found = {(local || !free_ends) ? 0 : NEG, 0, 0};
#endif
    const Costs c = {opening, extend};
    const size_t stride = (size_t)npairs;
    int rows = p.n;
#if REVERSE
    // An alignment of at most m query letters against r > m target letters holds r - m
    // of them against gaps: it scores at most best_step m - (opening + (r - m - 1)
    // extend), so rows past this bound cannot reach the score (cpu/align.py's
    // reverse_rows).
    const long long slack = (long long)best_step * p.m - target - opening;
    if (slack < 0)
        rows = min(rows, p.m);
    else if (extend > 0)
        rows = (int)min((long long)rows, p.m + 1 + slack / extend);
#endif
    int j0 = 0;
    for (; j0 + STRIP < p.m && rows > 0; j0 += STRIP)
        rows = strip<false>(p, j0, rows, s_subst, letters, c, bnd_h + k, bnd_e + k, stride,
                            found, target);
    if (rows > 0)
        strip<true>(p, j0, rows, s_subst, letters, c, bnd_h + k, bnd_e + k, stride, found,
                    target);
#if REVERSE
    // 1-based starts; a semi-global alignment no row of which reached the score holds no
    // target letter: target start 0
    out_q[k] = found.i ? p.m - found.j + 1 : 1;
    out_t[k] = found.i ? p.n - found.i + 1 : 0;
#else
    out_score[k] = found.score;
    out_q[k] = found.j;
    out_t[k] = found.i;
#endif
}

#if WORD && !REVERSE
// --- the local forward pass of two pairs per thread, in the 16-bit halves of each word ---
//
// Pairs 2k and 2k + 1 of the launch (the host orders them by size, so they are about as
// long) share thread k: H, E and F of both in one word, Hopper's DPX instructions doing
// both lanes at once, and one byte permute per cell picking both lanes' scores from the
// two column words. Local mode only (H >= 0, so E, F >= -opening, and every diagonal step
// >= PAD_SCORE), where the host has checked that no score can pass 32767: every value then
// fits 16 signed bits. The thread walks the longer query and target of its two pairs; a
// lane's columns past its query score PAD_SCORE, and its rows past its target (any letter
// there) are not looked at: they only feed later rows and columns of the same lane.

__device__ __forceinline__ u32 splat2(int x) { return ((u32)x & 0xFFFFu) * 0x10001u; }
__device__ __forceinline__ int half(u32 v, int lane) { return (short)(v >> (16 * lane)); }

// Selector picking byte b0 of the first column word (lane 0) and byte b1 of the second
// (lane 1), each sign-extended to 16 bits.
__device__ __forceinline__ u32 pair_selector(int b0, int b1)
{
    const u32 c1 = 4u + (u32)b1;
    return (u32)b0 | (((u32)b0 | 8u) << 4) | (c1 << 8) | ((c1 | 8u) << 12);
}

__device__ __forceinline__ u32 pair_step(u32 col0, u32 col1, u32 sel)
{
    u32 r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(col0), "r"(col1), "r"(sel));
    return r;
}

struct Lane {
    const unsigned char* Q;
    const unsigned char* T;
    int m, n;
};

template <bool LAST>
__device__ __forceinline__ void strip2(const Lane (&lane)[2], int j0, int rows,
                                       const int* s_subst, int letters, int opening,
                                       u32 neg_open, u32 neg_extend, u32* bnd_h, u32* bnd_e,
                                       size_t stride, Found (&found)[2])
{
    u32 col0[STRIP], col1[STRIP], h[STRIP], f[STRIP];
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        const int j = j0 + t + 1;
        col0[t] = column(j <= lane[0].m ? lane[0].Q[j - 1] : -1, s_subst, letters);
        col1[t] = column(j <= lane[1].m ? lane[1].Q[j - 1] : -1, s_subst, letters);
        h[t] = 0u;              // H(0, j)
        f[t] = splat2(-opening);  // F(1, j)
    }
    u32 up_left = 0u;
    for (int i = 1; i <= rows; i++) {
        u32 left_h, e;
        if (j0 == 0) {
            left_h = 0u;
            e = splat2(-opening);
        } else {
            left_h = bnd_h[(size_t)i * stride];
            e = bnd_e[(size_t)i * stride];
        }
        const u32 sel = pair_selector(i <= lane[0].n ? lane[0].T[i - 1] : 0,
                                      i <= lane[1].n ? lane[1].T[i - 1] : 0);
        u32 diag = up_left;
        up_left = left_h;
        u32 row_max = 0u;
#pragma unroll
        for (int t = 0; t < STRIP; t++) {
            const u32 d = __viaddmax_s16x2(diag, pair_step(col0[t], col1[t], sel), f[t]);
            const u32 x = __vimax3_s16x2(d, e, 0u);
            diag = h[t];
            h[t] = x;
            const u32 x_open = __vadd2(x, neg_open);
            e = __viaddmax_s16x2(e, neg_extend, x_open);
            f[t] = __viaddmax_s16x2(f[t], neg_extend, x_open);
            if (t & 1) row_max = __vimax3_s16x2(row_max, h[t - 1], h[t]);
        }
        if (!LAST) {
            bnd_h[(size_t)i * stride] = h[STRIP - 1];
            bnd_e[(size_t)i * stride] = e;
        }
#pragma unroll
        for (int l = 0; l < 2; l++) {
            const int r = half(row_max, l);
            if (i <= lane[l].n && (r > found[l].score || (r == found[l].score && i < found[l].i))) {
                int first = STRIP;
#pragma unroll
                for (int t = STRIP - 1; t >= 0; t--)
                    if (half(h[t], l) == r) first = t;
                found[l] = {r, i, j0 + first + 1};
            }
        }
    }
}

// As align_pairs (local, forward), two pairs a thread: thread k takes pairs 2k, 2k + 1;
// the boundary buffers hold one word per row and thread, stride the threads.
extern "C" __global__ void align_ends_pairs(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const int* __restrict__ subst, const int letters, const int opening, const int extend,
    u32* __restrict__ bnd_h, u32* __restrict__ bnd_e, int* __restrict__ out_score,
    int* __restrict__ out_q, int* __restrict__ out_t)
{
    __shared__ int s_subst[MAX_TABLE];
    load_table(s_subst, subst, letters);
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    const int threads = (npairs + 1) / 2;
    if (k >= threads) return;
    Lane lane[2];
    Found found[2] = {{0, 0, 0}, {0, 0, 0}};
    int rows = 0, columns = 0;
    for (int l = 0; l < 2; l++) {
        const int p = 2 * k + l;
        if (p < npairs) {
            const long long x = pa[p], y = pb[p];
            lane[l] = {codes + offsets[x], codes + offsets[y],
                       (int)(offsets[x + 1] - offsets[x]), (int)(offsets[y + 1] - offsets[y])};
        } else {
            lane[l] = {codes, codes, 0, 0};
        }
        rows = max(rows, lane[l].n);
        columns = max(columns, lane[l].m);
    }
    const u32 neg_open = splat2(-opening), neg_extend = splat2(-extend);
    const size_t stride = (size_t)threads;
    int j0 = 0;
    for (; j0 + STRIP < columns; j0 += STRIP)
        strip2<false>(lane, j0, rows, s_subst, letters, opening, neg_open, neg_extend,
                      bnd_h + k, bnd_e + k, stride, found);
    strip2<true>(lane, j0, rows, s_subst, letters, opening, neg_open, neg_extend, bnd_h + k,
                 bnd_e + k, stride, found);
    for (int l = 0; l < 2; l++) {
        const int p = 2 * k + l;
        if (p < npairs) {
            out_score[p] = found[l].score;
            out_q[p] = found[l].j;
            out_t[p] = found[l].i;
        }
    }
}
#endif
