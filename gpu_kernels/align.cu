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
#ifndef TWO  // 1: the kernel of two local pairs a thread, align_local_pairs (below)
#define TWO 0
#endif
#ifndef LONG  // 1: the kernel of a warp a pair, align_long (below)
#define LONG 0
#endif
#ifndef TRACE  // 1: the windows' traceback, align_trace (below)
#define TRACE 0
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

// The rows of the reverse pass from an end (m, n) that can reach the score: an alignment
// of at most m query letters against r > m target letters holds r - m of them against
// gaps, so it scores at most best_step m - (opening + (r - m - 1) extend)
// (cpu/align.py's reverse_rows).
__device__ __forceinline__ int reverse_rows(int m, int n, int score, Costs c, int best_step)
{
    const long long slack = (long long)best_step * m - score - c.opening;
    if (slack < 0) return min(n, m);
    if (c.extend > 0) return (int)min((long long)n, m + 1 + slack / c.extend);
    return n;
}

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

// Row i's cells h (columns col0 + 1 .., their largest row_max; column m's at_m where
// has_m) against the best so far: forward local, the highest cell (ties to the smaller row,
// then column); semi-global, column m's highest (the smaller row); global, column m of the
// last row. REVERSE: the first cell reaching `target` (local) or column m's first reaching
// it (semi-global), which it returns true for.
template <int N>
__device__ __forceinline__ bool track(const int (&h)[N], int row_max, int at_m, bool has_m,
                                      int i, int col0, const Pair& p, int target,
                                      Found& found)
{
#if REVERSE
    if (p.local) {
        if (row_max == target && (found.i == 0 || i < found.i)) {
            int first = N;
#pragma unroll
            for (int t = N - 1; t >= 0; t--)
                if (h[t] == target) first = t;
            found = {target, i, col0 + first + 1};
            return true;
        }
    } else if (has_m && at_m == target && (found.i == 0 || i < found.i)) {
        found = {target, i, p.m};
        return true;
    }
#else
    if (p.local) {
        if (row_max > found.score || (row_max == found.score && i < found.i)) {
            int first = N;
#pragma unroll
            for (int t = N - 1; t >= 0; t--)
                if (h[t] == row_max) first = t;
            found = {row_max, i, col0 + first + 1};
        }
    } else if (has_m && (p.free_ends ? at_m > found.score : i == p.n)) {
        found = {at_m, i, p.m};
    }
#endif
    return false;
}

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
        if (track(h, row_max, at_m, LAST, i, j0, p, target, found))
            return p.local ? i - 1 : 0;  // REVERSE: later cells come after this one
    }
    return rows;
}

// Pair k of a launch: its letters and mode (REVERSE: up to its end), the score to reach
// (REVERSE), the rows the pass needs, and the found cell's starting value.
__device__ __forceinline__ Pair pair_of(int k, const unsigned char* codes,
                                        const long long* offsets, const long long* pa,
                                        const long long* pb, const int* score_in,
                                        const int* qend_in, const int* tend_in, int local,
                                        int free_ends, Costs c, int best_step, int& target,
                                        int& rows, Found& found)
{
    const long long x = pa[k], y = pb[k];
    Pair p = {codes + offsets[x], codes + offsets[y], (int)(offsets[x + 1] - offsets[x]),
              (int)(offsets[y + 1] - offsets[y]), local, free_ends};
#if REVERSE
    target = score_in[k];
    p.m = qend_in[k];
    p.n = tend_in[k];
    rows = reverse_rows(p.m, p.n, target, c, best_step);
    found = {target, 0, 0};
#else
    target = 0;
    rows = p.n;
    found = {(local || !free_ends) ? 0 : NEG, 0, 0};
#endif
    return p;
}

// Pair k's result: score and 1-based ends, or (REVERSE) 1-based starts, where a
// semi-global alignment no row of which reached the score holds no target letter (target
// start 0).
__device__ __forceinline__ void put(int k, const Pair& p, const Found& found, int* out_score,
                                    int* out_q, int* out_t)
{
#if REVERSE
    out_q[k] = found.i ? p.m - found.j + 1 : 1;
    out_t[k] = found.i ? p.n - found.i + 1 : 0;
#else
    out_score[k] = found.score;
    out_q[k] = found.j;
    out_t[k] = found.i;
#endif
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
    const Costs c = {opening, extend};
    int target, rows;
    Found found;
    const Pair p = pair_of(k, codes, offsets, pa, pb, score_in, qend_in, tend_in, local,
                           free_ends, c, best_step, target, rows, found);
    const size_t stride = (size_t)npairs;
    int j0 = 0;
    for (; j0 + STRIP < p.m && rows > 0; j0 += STRIP)
        rows = strip<false>(p, j0, rows, s_subst, letters, c, bnd_h + k, bnd_e + k, stride,
                            found, target);
    if (rows > 0)
        strip<true>(p, j0, rows, s_subst, letters, c, bnd_h + k, bnd_e + k, stride, found,
                    target);
    put(k, p, found, out_score, out_q, out_t);
}


// --- the alignment of each window between start and end (align_trace, trace_long) ---
//
// backends/cpu/align.py's _trace, the same choices: the global alignment of the window
// with its moves, then the walk back from the last cell, runs written backwards from the
// end of the window's room and moved to its start. Ties: H prefers the diagonal, then E,
// then F; a gap prefers opening over extending.
#define FROM_E 1
#define FROM_F 2
#define E_EXTENDS 4
#define F_EXTENDS 8
// backends.alignments.WINDOW_OPS, "=XID"
#define SAME 0
#define DIFFERENT 1
#define INSERTION 2
#define DELETION 3

// The walk back from (n, m) of a window's moves (`moves(i, j)`: the bits of cell (i, j),
// borders included), its runs and counts [runs, matches, mismatches, openings] into the
// window's room (ops/len, cap entries) and c[0..3].
template <class Moves>
__device__ void walk_back(const Moves& moves, const unsigned char* q, const unsigned char* tt,
                          int m, int n, unsigned char* o, int* len, long long cap,
                          long long* c)
{
    int i = n, j = m, state = 0;  // 0: H, 1: E, 2: F
    long long runs = 0, matches = 0, mismatches = 0, openings = 0;
    int last = -1;
    while (i > 0 || j > 0) {
        const int bits = moves(i, j);
        if (state == 0) {
            state = (bits & FROM_E) ? 1 : (bits & FROM_F) ? 2 : 0;
            if (i == 0)
                state = 1;
            else if (j == 0)
                state = 2;
        }
        int op;
        if (state == 0) {
            op = q[j - 1] == tt[i - 1] ? SAME : DIFFERENT;
            if (op == SAME)
                matches++;
            else
                mismatches++;
            i--;
            j--;
        } else if (state == 1) {
            op = INSERTION;
            if (!(bits & E_EXTENDS)) {
                state = 0;
                openings++;
            }
            j--;
        } else {
            op = DELETION;
            if (!(bits & F_EXTENDS)) {
                state = 0;
                openings++;
            }
            i--;
        }
        if (op == last) {
            len[cap - runs]++;
        } else {
            runs++;
            o[cap - runs] = (unsigned char)op;
            len[cap - runs] = 1;
            last = op;
        }
    }
    for (long long r = 0; r < runs; r++) {  // to the start of the room (regions may overlap:
        o[r] = o[cap - runs + r];           // forwards, the source is never behind)
        len[r] = len[cap - runs + r];
    }
    c[0] = runs;
    c[1] = matches;
    c[2] = mismatches;
    c[3] = openings;
}

// A window's letters and sizes: query qstart..qend against target tstart..tend (1-based).
struct Window {
    const unsigned char *q, *t;
    int m, n;
};

__device__ __forceinline__ Window window_of(
    long long k, const unsigned char* codes, const long long* offsets, const long long* pa,
    const long long* pb, const long long* qstart, const long long* qend,
    const long long* tstart, const long long* tend)
{
    const long long q0 = max(qstart[k], 1LL), t0 = max(tstart[k], 1LL);
    return {codes + offsets[pa[k]] + q0 - 1, codes + offsets[pb[k]] + t0 - 1,
            (int)max(qend[k] - q0 + 1, 0LL), (int)max(tend[k] - t0 + 1, 0LL)};
}

#if TRACE
// align_trace: a thread a window (windows `which`), its moves a byte a cell in the
// window's own stretch of `moves`. H and F of the row above are in `rows`: H of column j
// at [j][window], F at [columns + j][window], so that the threads of a warp use them
// together.
struct ByteMoves {
    const unsigned char* mv;
    size_t w;  // a row's cells
    __device__ int operator()(int i, int j) const { return mv[i * w + j]; }
};

extern "C" __global__ void align_trace(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int windows,
    const long long* __restrict__ which, const int count,
    const long long* __restrict__ qstart, const long long* __restrict__ qend,
    const long long* __restrict__ tstart, const long long* __restrict__ tend,
    const int* __restrict__ subst, const int letters, const int opening, const int extend,
    const long long* __restrict__ moves_at, unsigned char* __restrict__ moves,
    int* __restrict__ rows, const int columns, const long long* __restrict__ room,
    unsigned char* __restrict__ ops, int* __restrict__ lengths,
    long long* __restrict__ counts)  // [window][runs, matches, mismatches, openings, score]
{
    __shared__ int s_subst[MAX_TABLE];
    load_table(s_subst, subst, letters);
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= count) return;
    const long long k = which[x];
    const Window win = window_of(k, codes, offsets, pa, pb, qstart, qend, tstart, tend);
    const unsigned char *q = win.q, *tt = win.t;
    const int m = win.m, n = win.n;
    const size_t w = (size_t)m + 1, stride = (size_t)windows;
    unsigned char* mv = moves + moves_at[k];
    int* h_row = rows + k;
    int* f_row = rows + (size_t)columns * stride + k;
    h_row[0] = 0;
    f_row[0] = NEG;
    for (int j = 1; j <= m; j++) {
        h_row[j * stride] = -gap(j, opening, extend);
        f_row[j * stride] = NEG;
        mv[j] = FROM_E | (j > 1 ? E_EXTENDS : 0);
    }
    for (int i = 1; i <= n; i++) {
        const int b = tt[i - 1];
        int diag = h_row[0];
        int left = -gap(i, opening, extend);
        h_row[0] = left;
        mv[i * w] = FROM_F | (i > 1 ? F_EXTENDS : 0);
        int e = NEG;
        for (int j = 1; j <= m; j++) {
            int bits = 0;
            const int e_open = left - opening, e_ext = e - extend;
            if (e_ext > e_open) {
                e = e_ext;
                bits |= E_EXTENDS;
            } else {
                e = e_open;
            }
            const int up = h_row[j * stride], f_up = f_row[j * stride];
            const int f_open = up - opening, f_ext = f_up - extend;
            int f;
            if (f_ext > f_open) {
                f = f_ext;
                bits |= F_EXTENDS;
            } else {
                f = f_open;
            }
            int h = diag + s_subst[q[j - 1] * letters + b];
            if (e > h) {
                h = e;
                bits |= FROM_E;
            }
            if (f > h) {
                h = f;
                bits = (bits & ~FROM_E) | FROM_F;
            }
            diag = up;
            h_row[j * stride] = h;
            f_row[j * stride] = f;
            left = h;
            mv[i * w + j] = (unsigned char)bits;
        }
    }
    long long* c = counts + (size_t)k * 5;
    c[4] = h_row[m * stride];
    walk_back(ByteMoves{mv, w}, q, tt, m, n, ops + room[k], lengths + room[k],
              room[k + 1] - room[k], c);
}
#endif

#if LONG
// --- long pairs: a warp per pair (align_long) ---
//
// One thread a pair leaves the GPU idle when a few long pairs are all there is, and each
// pair takes as long as one thread needs for it. Here the 32 lanes of a warp share a pair:
// lane t owns COLS consecutive columns of each tile of 32 x COLS columns and works on row
// i at step i + t (a wavefront), taking H and E of the column to its left from lane t - 1's
// previous step (a shuffle); lane 0 takes them from the tile's left edge, [row] per pair in
// global memory, written by lane 31 in the previous tile. The recurrence, borders, padding
// and tie rules are align_pairs' (32 bits, every mode); each lane keeps the best cell of
// its own columns, and the warp takes the best of its lanes' at the end: the higher score,
// then the smaller row, then the smaller column (REVERSE: the first in row-major order).
#ifndef COLS
#define COLS 8
#endif
#define FULL_WARP 0xFFFFFFFFu

__device__ __forceinline__ bool before(const Found& a, const Found& b)
{
    if (a.i == 0) return false;  // none
    if (b.i == 0) return true;
    if (!REVERSE && a.score != b.score) return a.score > b.score;
    return a.i < b.i || (a.i == b.i && a.j < b.j);
}

__device__ __forceinline__ Found warp_best(Found f)
{
#pragma unroll
    for (int d = 16; d; d >>= 1) {
        const Found o = {__shfl_xor_sync(FULL_WARP, f.score, d),
                         __shfl_xor_sync(FULL_WARP, f.i, d), __shfl_xor_sync(FULL_WARP, f.j, d)};
        if (before(o, f)) f = o;
    }
    return f;
}

// Arguments as align_pairs', but for the tile edges: [pair][row] (H, E), `edge_rows` rows
// a pair.
extern "C" __global__ void align_long(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const int* __restrict__ score_in, const int* __restrict__ qend_in,
    const int* __restrict__ tend_in, const int* __restrict__ subst, const int letters,
    const int opening, const int extend, const int local, const int free_ends,
    const int best_step, int2* __restrict__ edge, const long long edge_rows,
    int* __restrict__ out_score, int* __restrict__ out_q, int* __restrict__ out_t)
{
    __shared__ int s_subst[MAX_TABLE];
    load_table(s_subst, subst, letters);
    const int k = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (k >= npairs) return;  // the whole warp
    const Costs c = {opening, extend};
    int target, rows;
    Found found;
    const Pair p = pair_of(k, codes, offsets, pa, pb, score_in, qend_in, tend_in, local,
                           free_ends, c, best_step, target, rows, found);
    int2* pair_edge = edge + (size_t)k * edge_rows;
    const bool floor_at_zero = !REVERSE && p.local;
    const int floor = floor_at_zero ? 0 : NEG;
    const bool free_rows = floor_at_zero || (!REVERSE && p.free_ends);
    for (int j0 = 0; j0 < p.m && rows > 0; j0 += 32 * COLS) {
        const int c0 = j0 + lane * COLS;  // this lane's columns: c0 + 1 .. c0 + COLS
        const bool last_tile = j0 + 32 * COLS >= p.m;
        const int m_t = p.m - 1 - c0;     // column m's place among them, if there
        Column col[COLS];
        int h[COLS], f[COLS];
#pragma unroll
        for (int t = 0; t < COLS; t++) {
            const int j = c0 + t + 1;
            col[t] = column(j <= p.m ? query_letter(p, j) : -1, s_subst, letters);
            h[t] = floor_at_zero ? 0 : -gap(j, c.opening, c.extend);  // H(0, j)
            f[t] = h[t] - c.opening;                                      // F(1, j)
        }
        int up_left = (c0 == 0 || floor_at_zero) ? 0 : -gap(c0, c.opening, c.extend);
        int sent_h = 0, sent_e = 0;  // this lane's right edge, for lane + 1's next step
        for (int s = 1; s <= rows + 31; s++) {
            int left_h = __shfl_up_sync(FULL_WARP, sent_h, 1);
            int e = __shfl_up_sync(FULL_WARP, sent_e, 1);
            const int i = s - lane;
            if (i < 1 || i > rows) continue;
            if (lane == 0) {
                if (j0 == 0) {
                    left_h = free_rows ? 0 : -gap(i, c.opening, c.extend);  // H(i, 0)
                    e = left_h - c.opening;
                } else {
                    const int2 v = pair_edge[i];
                    left_h = v.x;
                    e = v.y;
                }
            }
            const u32 sel = selector(target_letter(p, i));
            int diag = up_left;
            up_left = left_h;
            int row_max = NEG;
#pragma unroll
            for (int t = 0; t < COLS; t++) {
                const int d = add_max(diag, step(col[t], sel, s_subst), f[t]);
                const int v = max3(d, e, floor);
                diag = h[t];
                h[t] = v;
                const int v_open = v - c.opening;
                e = add_max(e, -c.extend, v_open);
                f[t] = add_max(f[t], -c.extend, v_open);
                row_max = max(row_max, v);
            }
            sent_h = h[COLS - 1];
            sent_e = e;
            if (lane == 31 && !last_tile) pair_edge[i] = make_int2(sent_h, sent_e);
            int at_m = NEG;
#pragma unroll
            for (int t = 0; t < COLS; t++)
                if (t == m_t) at_m = h[t];
            track(h, row_max, at_m, m_t >= 0 && m_t < COLS, i, c0, p, target, found);
        }
        __syncwarp();  // lane 31's edge before lane 0 reads it in the next tile
#if REVERSE
        // later tiles only matter above the first cell found
        const Found best = warp_best(found);
        if (best.i) rows = p.local ? best.i - 1 : 0;
#endif
    }
    found = warp_best(found);
    if (lane == 0) put(k, p, found, out_score, out_q, out_t);
}

#if !REVERSE
// --- seqpairs scan: every row's best along a block of a long target (scan_rows) ---
//
// align_long's wavefront, local mode, over a block of target rows (src/seqpairs/pairs/
// scan.py: rows lo + 1 .. hi of the target from a fresh border at row lo), keeping each
// row's key instead of the best cell: its best H and first query column, packed as
// H << COLUMN_BITS | (COLUMN_MASK - column) (backends/common.py), so that the largest key
// holds both. A lane adds its own columns' best to the key it is handed with the row's H
// and E (a third shuffle). Padding columns past the query do not count.
//
// A thread block of SCAN_WARPS warps takes one block of rows: warp w the tile of columns
// w (then w + SCAN_WARPS, ... in later rounds), SCAN_LAG warp-steps behind warp w - 1, to
// which its lane 0 listens through a ring of rows in shared memory (H, E, key of the
// column left of its tile); the warps step CHUNK warp-steps between barriers, and a lag
// of two chunks puts every row's hand-over in an earlier chunk than its use (lane 31
// writes row i at warp-step i + 31 < the next warp's i + SCAN_LAG). The last warp of a
// round hands over to the next round through global memory ([row] per block), and the
// last round's writes the keys.
#define COLUMN_BITS 15
#define COLUMN_MASK ((1 << COLUMN_BITS) - 1)
// KEY32 1: the keys in 32 bits, for queries whose best score is below 2^17 - 1 (the host
// checks), so a cell's part of its row's key is one multiply-add and one maximum;
// padding columns multiply by 0 and add 0.
#ifndef KEY32
#define KEY32 1
#endif
#if KEY32
typedef u32 Key;
#else
typedef long long Key;
#endif
#ifndef SCAN_WARPS
#define SCAN_WARPS 16
#endif
// ANCHORED 1: kernel 2's reverse pass (pairs/scan.py) over reversed windows: the same
// recurrence with borders that pay their gaps and no floor at 0, so a cell holds the best
// alignment from it to the anchor (row 0, column 0); a row's key takes max(H, 0).
#ifndef ANCHORED
#define ANCHORED 0
#endif
#define CHUNK 32
#define SCAN_LAG (2 * CHUNK)
#define RING (4 * CHUNK)  // rows a hand-over ring holds: more than SCAN_LAG + 31

struct Handed {  // what a warp's lane 31 hands to the next warp's lane 0, per row
    int h, e;
    Key key;
};

extern "C" __global__ void __launch_bounds__(32 * SCAN_WARPS) scan_rows(
    const unsigned char* __restrict__ q_codes, const long long* __restrict__ q_offsets,
    const unsigned char* __restrict__ t_codes, const long long* __restrict__ t_offsets,
    const long long* __restrict__ item_query, const long long* __restrict__ item_target,
    const long long* __restrict__ item_lo, const long long* __restrict__ item_hi,
    const long long* __restrict__ item_base,  // each block's first row in edge and keys
    const int nitems, const int* __restrict__ subst, const int letters, const int opening,
    const int extend, int2* __restrict__ edge, Key* __restrict__ keys)
{
    __shared__ int s_subst[MAX_TABLE];
    __shared__ Handed ring[SCAN_WARPS][RING];
    load_table(s_subst, subst, letters);
    const int k = blockIdx.x;
    if (k >= nitems) return;  // the whole block
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const long long q = item_query[k];
    const unsigned char* Q = q_codes + q_offsets[q];
    const int m = (int)(q_offsets[q + 1] - q_offsets[q]);
    const unsigned char* T = t_codes + t_offsets[item_target[k]] + item_lo[k];
    const int rows = (int)(item_hi[k] - item_lo[k]);
    int2* row_edge = edge + item_base[k] - 1;  // [row], rows 1 .. rows
    Key* row_key = keys + item_base[k] - 1;
    const int tiles = (m + 32 * COLS - 1) / (32 * COLS);
    const int steps = rows + 31 + (SCAN_WARPS - 1) * SCAN_LAG;  // the last warp's last row
    for (int round = 0; round * SCAN_WARPS < tiles; round++) {
        const int j0 = (round * SCAN_WARPS + warp) * 32 * COLS;
        const int c0 = j0 + lane * COLS;  // this lane's columns: c0 + 1 .. c0 + COLS
        const bool first_warp = warp == 0, last_warp = warp == SCAN_WARPS - 1;
        const bool last_round = (round + 1) * SCAN_WARPS >= tiles;
        Column col[COLS];
        int h[COLS], f[COLS];
        Key scale[COLS], term[COLS];  // a cell's key: v * scale + term
#pragma unroll
        for (int t = 0; t < COLS; t++) {
            const int j = c0 + t + 1;
            col[t] = column(j <= m ? Q[j - 1] : -1, s_subst, letters);
            h[t] = ANCHORED ? -gap(j, opening, extend) : 0;  // H(0, j)
            f[t] = h[t] - opening;                           // F(1, j)
            scale[t] = j <= m ? (Key)1 << COLUMN_BITS : 0;
            term[t] = j <= m ? (Key)(COLUMN_MASK - (j - 1)) : 0;
        }
        int up_left = ANCHORED && c0 ? -gap(c0, opening, extend) : 0;  // H(0, c0)
        int sent_h = 0, sent_e = 0;
        Key sent_key = 0;
        for (int chunk = 0; chunk * CHUNK < steps; chunk++) {
            for (int g = chunk * CHUNK; g < (chunk + 1) * CHUNK; g++) {
                const int s = g - warp * SCAN_LAG + 1;  // this warp's step
                int left_h = __shfl_up_sync(FULL_WARP, sent_h, 1);
                int e = __shfl_up_sync(FULL_WARP, sent_e, 1);
                Key key = __shfl_up_sync(FULL_WARP, sent_key, 1);
                const int i = s - lane;
                if (i < 1 || i > rows) continue;
                if (lane == 0) {
                    if (!first_warp) {
                        const Handed v = ring[warp - 1][i % RING];
                        left_h = v.h;
                        e = v.e;
                        key = v.key;
                    } else if (round == 0) {
                        left_h = ANCHORED ? -gap(i, opening, extend) : 0;  // H(i, 0)
                        e = left_h - opening;                              // E(i, 1)
                        key = 0;
                    } else {
                        const int2 v = row_edge[i];
                        left_h = v.x;
                        e = v.y;
                        key = row_key[i];
                    }
                }
                const u32 sel = selector(T[i - 1]);
                int diag = up_left;
                up_left = left_h;
#pragma unroll
                for (int t = 0; t < COLS; t++) {
                    const int d = add_max(diag, step(col[t], sel, s_subst), f[t]);
                    const int v = max3(d, e, ANCHORED ? NEG : 0);
                    diag = h[t];
                    h[t] = v;
                    const int v_open = v - opening;
                    e = add_max(e, -extend, v_open);
                    f[t] = add_max(f[t], -extend, v_open);
                    key = max(key, (Key)(ANCHORED ? max(v, 0) : v) * scale[t] + term[t]);
                }
                sent_h = h[COLS - 1];
                sent_e = e;
                sent_key = key;
                if (lane == 31) {
                    if (!last_warp) {
                        ring[warp][i % RING] = {sent_h, sent_e, key};
                    } else {
                        if (!last_round) row_edge[i] = make_int2(sent_h, sent_e);
                        row_key[i] = key;
                    }
                }
            }
            __syncthreads();  // this chunk's hand-overs before the next warps read them
        }
    }
}

// --- trace_long: a thread block a window (windows `which`) ---
//
// For few or long windows, where a thread a window leaves the GPU idle: scan_rows'
// wavefront (warp w the tile of columns w, then w + SCAN_WARPS, ...) over the window's
// global alignment with align_trace's recurrence and choices; each lane's COLS moves of a
// row packed in a word (4 bits a cell) at [row - 1][column group of the lane], then
// thread 0 walks back. Tile edges between rounds: [row] per window in `edge`.
#if COLS > 16
#error "trace_long packs a lane's COLS moves of a row in 64 bits"
#endif
typedef unsigned long long u64;

struct PackedMoves {
    const u64* words;
    int per_row;  // words a row: ceil(m / COLS)
    __device__ int operator()(int i, int j) const
    {
        if (i == 0) return FROM_E | (j > 1 ? E_EXTENDS : 0);
        if (j == 0) return FROM_F | (i > 1 ? F_EXTENDS : 0);
        const u64 word = words[(size_t)(i - 1) * per_row + (j - 1) / COLS];
        return (int)(word >> (4 * ((j - 1) % COLS))) & 15;
    }
};

extern "C" __global__ void __launch_bounds__(32 * SCAN_WARPS) trace_long(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb,
    const long long* __restrict__ which, const long long* __restrict__ qstart,
    const long long* __restrict__ qend, const long long* __restrict__ tstart,
    const long long* __restrict__ tend, const int* __restrict__ subst, const int letters,
    const int opening, const int extend,
    const long long* __restrict__ moves_at, u64* __restrict__ moves,  // by block
    const long long* __restrict__ edge_at, int2* __restrict__ edge,   // by block
    const long long* __restrict__ room, unsigned char* __restrict__ ops,
    int* __restrict__ lengths, long long* __restrict__ counts)
{
    __shared__ int s_subst[MAX_TABLE];
    __shared__ int2 ring[SCAN_WARPS][RING];  // (H, E) of the column left of a warp's tile
    load_table(s_subst, subst, letters);
    const long long k = which[blockIdx.x];
    const Window win = window_of(k, codes, offsets, pa, pb, qstart, qend, tstart, tend);
    const int m = win.m, rows = win.n, per_row = (m + COLS - 1) / COLS;
    u64* mv = moves + moves_at[blockIdx.x];
    int2* row_edge = edge + edge_at[blockIdx.x] - 1;  // rows 1 .. rows
    long long* c = counts + (size_t)k * 5;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int tiles = (m + 32 * COLS - 1) / (32 * COLS);
    const int steps = rows + 31 + (SCAN_WARPS - 1) * SCAN_LAG;
    for (int round = 0; round * SCAN_WARPS < tiles; round++) {
        const int j0 = (round * SCAN_WARPS + warp) * 32 * COLS;
        const int c0 = j0 + lane * COLS;  // this lane's columns: c0 + 1 .. c0 + COLS
        const bool first_warp = warp == 0, last_warp = warp == SCAN_WARPS - 1;
        const bool last_round = (round + 1) * SCAN_WARPS >= tiles;
        const int m_t = m - 1 - c0;  // column m's place among them, if there
        Column col[COLS];
        int h[COLS], f[COLS];  // H and F of the row above
#pragma unroll
        for (int t = 0; t < COLS; t++) {
            const int j = c0 + t + 1;
            col[t] = column(j <= m ? win.q[j - 1] : -1, s_subst, letters);
            h[t] = -gap(j, opening, extend);  // H(0, j)
            f[t] = NEG;                       // F(0, j)
        }
        int up_left = c0 ? -gap(c0, opening, extend) : 0;  // H(0, c0)
        int sent_h = 0, sent_e = 0;
        for (int chunk = 0; chunk * CHUNK < steps; chunk++) {
            for (int g = chunk * CHUNK; g < (chunk + 1) * CHUNK; g++) {
                const int s = g - warp * SCAN_LAG + 1;  // this warp's step
                int left_h = __shfl_up_sync(FULL_WARP, sent_h, 1);
                int e = __shfl_up_sync(FULL_WARP, sent_e, 1);  // E of the column left
                const int i = s - lane;
                if (i < 1 || i > rows) continue;
                if (lane == 0) {
                    int2 v;
                    if (!first_warp)
                        v = ring[warp - 1][i % RING];
                    else if (round == 0)
                        v = make_int2(-gap(i, opening, extend), NEG);  // H(i, 0), E(i, 0)
                    else
                        v = row_edge[i];
                    left_h = v.x;
                    e = v.y;
                }
                const u32 sel = selector(win.t[i - 1]);
                int diag = up_left;
                up_left = left_h;
                u64 word = 0;
#pragma unroll
                for (int t = 0; t < COLS; t++) {
                    int bits = 0;
                    const int e_open = left_h - opening, e_ext = e - extend;
                    bits |= e_ext > e_open ? E_EXTENDS : 0;
                    e = max(e_ext, e_open);
                    const int f_open = h[t] - opening, f_ext = f[t] - extend;
                    bits |= f_ext > f_open ? F_EXTENDS : 0;
                    f[t] = max(f_ext, f_open);
                    int v = diag + step(col[t], sel, s_subst);
                    if (e > v) {
                        v = e;
                        bits |= FROM_E;
                    }
                    if (f[t] > v) {
                        v = f[t];
                        bits = (bits & ~FROM_E) | FROM_F;
                    }
                    diag = h[t];
                    h[t] = left_h = v;
                    word |= (u64)bits << (4 * t);
                }
                if (c0 < m) mv[(size_t)(i - 1) * per_row + c0 / COLS] = word;
                if (i == rows) {
#pragma unroll
                    for (int t = 0; t < COLS; t++)
                        if (t == m_t) c[4] = h[t];  // the score, H(n, m)
                }
                sent_h = h[COLS - 1];
                sent_e = e;
                if (lane == 31) {
                    if (!last_warp)
                        ring[warp][i % RING] = make_int2(sent_h, sent_e);
                    else if (!last_round)
                        row_edge[i] = make_int2(sent_h, sent_e);
                }
            }
            __syncthreads();  // this chunk's hand-overs (and moves) before they are read
        }
    }
    if (threadIdx.x == 0)
        walk_back(PackedMoves{mv, per_row}, win.q, win.t, m, rows, ops + room[k],
                  lengths + room[k], room[k + 1] - room[k], c);
}
#endif
#endif

#if TWO
#if STRIP % 4 || (!WORD && STRIP % 16)
#error "STRIP: a multiple of 4 (rows are stored four words at a time), of 16 with a profile"
#endif
// --- local passes of two pairs per thread, in the 16-bit halves of each word ---
//
// Pairs 2k and 2k + 1 of the launch (the host orders them by size, so they are about as
// long) share thread k: H, E and F of both in one word, Hopper's DPX instructions doing
// both lanes at once. Local mode only, where the host has checked that no score can pass
// 32767 (H >= 0, E and F >= -opening, a step >= -128: every value fits 16 signed bits).
//
// Scores, WORD 1 (alphabets of up to 4 letters): a row's target letters pick each lane's
// row word (the scores of query letters 0-3 against that target letter, a byte each); a
// column keeps only the byte permute selector of its two query letters, so one register
// per column holds both lanes' scores. WORD 0 (larger alphabets): each thread keeps, in
// shared memory, its lanes' profiles of the strip (the int8 score of every letter against
// each column's query letter, built at the strip's start); a row reads the two lanes'
// bytes for their target letters, STRIP bytes each, and a byte permute pairs them.
//
// Columns: the thread's columns are the longer query's, in whole strips ending at its
// last letter; each lane's query ends there too, so a lane has virtual columns before
// its first letter (the first strip's padding, and the difference of the queries). Their
// selector replicates a byte's sign into the lane (WORD 0: a profile byte of 0), a step
// of 0 or -1: with the border's
// H = 0 and E = -opening coming in, every virtual cell holds H = 0, E = F = -opening,
// which is what column 0 holds, so the lane's real columns see the local border. Rows:
// a lane's rows past its target are computed (letter 0) and not looked at; they feed
// only later rows of the same lane.
//
// REVERSE 1 (align_starts): the reverse pass from the pair's end (score S > 0) is the
// same local recurrence over the reversed prefixes, floor at 0 included. Every optimal
// alignment ending at the chosen end has all its suffixes above 0 (else dropping one
// gives an end with a smaller target, or the same target and a smaller query end, that
// reaches S, which the tie rule would have chosen), so the anchored values on its path
// are unchanged by the floor; and a path that starts afresh inside (from 0) and reaches
// S would be such an earlier end. So the cells reaching S are those of align_pairs'
// anchored pass, and the first in row-major order is the same cell.
//
// Rows go two at a time, H alternating between two arrays (no copies), so a lane's
// target is walked to an even number of rows; the edge buffer has one row more.

__device__ __forceinline__ u32 splat2(int x) { return ((u32)x & 0xFFFFu) * 0x10001u; }
__device__ __forceinline__ int half(u32 v, int lane) { return (short)(v >> (16 * lane)); }

// The byte permute selector of a column (16 bits, lane 1 in the upper byte pair): query
// letter a picks byte a of the lane's row word (lane 1's are bytes 4-7), sign-extended;
// a virtual column (a < 0) replicates the sign of the lane's byte 0 into both bytes.
__device__ __forceinline__ u32 lane_selector(int a, int lane)
{
    const u32 b = 4u * lane + (a < 0 ? 0u : (u32)a);
    return ((a < 0 ? b | 8u : b) | ((b | 8u) << 4)) << (8 * lane);
}

__device__ __forceinline__ u32 row_step(u32 row0, u32 row1, u32 sel)
{
    u32 r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(row0), "r"(row1), "r"(sel));
    return r;
}

struct Lane {
    const unsigned char* Q;  // query letters, read forwards (or backwards from Q[m - 1])
    const unsigned char* T;  // target letters, likewise
    int m, n;                // its columns and rows (REVERSE: up to the end)
    int rows;                // rows still to look at
    int shift;               // the thread's columns before its first letter
};

__device__ __forceinline__ int lane_query(const Lane& l, int column)  // the thread's, 1-based
{
    const int j = column - l.shift;
    return j < 1 ? -1 : (REVERSE ? l.Q[l.m - j] : l.Q[j - 1]);
}

__device__ __forceinline__ u32 lane_target(const Lane& l, int i)  // 1-based, 0 past n
{
    return i <= l.n ? (REVERSE ? l.T[l.n - i] : l.T[i - 1]) : 0;
}

#if WORD
struct Strip2 {
    u32 sel[STRIP];  // the columns' selectors
    u32 f[STRIP];    // F(i + 1, j)
    u32 diag_left;   // H(i - 1, j0)
    const u32* rows;  // the block's row words
};

struct RowScores {  // both lanes' row words
    u32 w0, w1;
};

__device__ __forceinline__ RowScores row_scores(const Strip2& s, u32 letters)
{
    return {s.rows[letters & 0xFFu], s.rows[letters >> 8]};
}

__device__ __forceinline__ u32 cell_step(const Strip2& s, const RowScores& r, int t)
{
    return row_step(r.w0, r.w1, s.sel[t]);
}
#else
struct Strip2 {
    u32 f[STRIP];
    u32 diag_left;
    const uint4* profile;  // the thread's: [lane][letter][STRIP bytes]
    int letters;
};

struct RowScores {  // the lanes' profile bytes of the row's target letters
    uint4 w0[STRIP / 16], w1[STRIP / 16];
};

__device__ __forceinline__ RowScores row_scores(const Strip2& s, u32 letters)
{
    RowScores r;
    const uint4* p0 = s.profile + (letters & 0xFFu) * (STRIP / 16);
    const uint4* p1 = s.profile + (s.letters + (letters >> 8)) * (STRIP / 16);
#pragma unroll
    for (int v = 0; v < STRIP / 16; v++) {
        r.w0[v] = p0[v];
        r.w1[v] = p1[v];
    }
    return r;
}

__device__ __forceinline__ u32 word_of(const uint4& w, int x)
{
    return x == 0 ? w.x : x == 1 ? w.y : x == 2 ? w.z : w.w;
}

// Selector: byte k of the first word and byte k of the second, each sign-extended.
#define PAIR_SELECTOR(k) ((k) | (((k) | 8) << 4) | ((4 + (k)) << 8) | (((4 + (k)) | 8) << 12))

__device__ __forceinline__ u32 cell_step(const Strip2&, const RowScores& r, int t)
{
    return row_step(word_of(r.w0[t / 16], (t / 4) % 4), word_of(r.w1[t / 16], (t / 4) % 4),
                    PAIR_SELECTOR(t % 4));
}
#endif

// Row i from H of row i - 1 (`up`) into `h`; returns E past the strip's last column.
__device__ __forceinline__ u32 row2(Strip2& s, const u32 (&up)[STRIP], u32 (&h)[STRIP],
                                    const RowScores& scores, uint2 left, u32 neg_open,
                                    u32 neg_extend, u32& row_max)
{
    u32 e = left.y;
    row_max = 0u;
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        const u32 step = cell_step(s, scores, t);
        const u32 d = __viaddmax_s16x2(t ? up[t - 1] : s.diag_left, step, s.f[t]);
        h[t] = __vimax3_s16x2(d, e, 0u);
        // h - opening as an add-max with a floor that never wins: one three-operand
        // instruction (__vadd2 compiles to a two-operand add and a copy)
        const u32 x_open = __viaddmax_s16x2(h[t], neg_open, 0x80008000u);
        e = __viaddmax_s16x2(e, neg_extend, x_open);
        s.f[t] = __viaddmax_s16x2(s.f[t], neg_extend, x_open);
        if (t & 1) row_max = __vimax3_s16x2(row_max, h[t - 1], h[t]);
    }
    s.diag_left = left.x;
    return e;
}

// The lanes whose row i of the strip (thread columns j0 + 1 ..) holds their best so far
// (forward: the highest, ties to the smaller row; REVERSE: the first reaching S). `best`
// holds each lane's score to meet (0x7FFF: done with this strip), `rows` the rows the
// strip still needs. Such a row is stored whole in the lane's snapshot, and its column
// found once at the end (find_column): the best improves on most rows the alignment
// crosses, so this runs often, and the warp waits for it.
__device__ __forceinline__ void look(int i, int j0, const u32 (&h)[STRIP], u32 row_max,
                                     Lane (&lane)[2], Found (&found)[2], u32& best,
                                     int& rows, uint4* snapshot)
{
#pragma unroll
    for (int l = 0; l < 2; l++) {
        const int r = half(row_max, l);
        const u32 mask = 0xFFFFu << (16 * l);
        if (i > lane[l].rows) {
            best |= mask;
            continue;
        }
        if (r > found[l].score || (r == found[l].score && i < found[l].i)) {
            found[l] = {r, i, j0};
#pragma unroll
            for (int v = 0; v < STRIP / 4; v++)
                snapshot[l * (STRIP / 4) + v] =
                    make_uint4(h[4 * v], h[4 * v + 1], h[4 * v + 2], h[4 * v + 3]);
            if (REVERSE) {  // the lane's later cells come after this one
                lane[l].rows = i - 1;
                best |= mask;
            } else {
                best = (best & ~mask) | (((u32)r & 0xFFFFu) << (16 * l));
            }
        }
    }
    if (REVERSE) rows = max(lane[0].rows, lane[1].rows);
}

// The thread column of lane l's best: the first of its snapshot row holding the score.
__device__ __forceinline__ int find_column(const uint4* snapshot, int l, const Found& found)
{
    int first = STRIP;
#pragma unroll
    for (int v = STRIP / 4 - 1; v >= 0; v--) {
        const uint4 w = snapshot[l * (STRIP / 4) + v];
        const u32 h[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
        for (int t = 3; t >= 0; t--)
            if (half(h[t], l) == found.score) first = 4 * v + t;
    }
    return found.j + first + 1;
}

// What the block shares: WORD 1 the row words, WORD 0 the substitution table, and each
// thread's profile.
struct Shared {
    const int* subst;    // letters x letters
    int letters;
    const u32* rows;     // row words (WORD 1)
    uint4* profile;      // the thread's (WORD 0)
};

__device__ __forceinline__ void strip_scores(Strip2& s, const Lane (&lane)[2], int j0,
                                             const Shared& sh)
{
#if WORD
    s.rows = sh.rows;
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        const int j = j0 + t + 1;
        s.sel[t] = lane_selector(lane_query(lane[0], j), 0) |
                   lane_selector(lane_query(lane[1], j), 1);
    }
#else
    s.profile = sh.profile;
    s.letters = sh.letters;
    u32* words = (u32*)sh.profile;
    for (int l = 0; l < 2; l++) {
        int a[STRIP];
#pragma unroll
        for (int t = 0; t < STRIP; t++) a[t] = lane_query(lane[l], j0 + t + 1);
        for (int b = 0; b < sh.letters; b++) {
#pragma unroll
            for (int v = 0; v < STRIP / 4; v++) {
                u32 w = 0u;
#pragma unroll
                for (int x = 0; x < 4; x++) {
                    const int q = a[4 * v + x];
                    const int score = q < 0 ? 0 : sh.subst[q * sh.letters + b];
                    w |= ((u32)score & 0xFFu) << (8 * x);
                }
                words[(l * sh.letters + b) * (STRIP / 4) + v] = w;
            }
        }
    }
#endif
}

__device__ __forceinline__ void strip2(Lane (&lane)[2], int j0, bool first, bool last,
                                       const Shared& sh, u32 neg_open, u32 neg_extend,
                                       const unsigned short* letters, uint2* edge,
                                       size_t stride, Found (&found)[2], uint4* snapshot)
{
    Strip2 s;
    u32 ha[STRIP], hb[STRIP];
    strip_scores(s, lane, j0, sh);
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        ha[t] = 0u;         // H(0, j)
        s.f[t] = neg_open;  // F(1, j)
    }
    s.diag_left = 0u;
    u32 best = 0u;
    for (int l = 0; l < 2; l++)
        best |= ((lane[l].rows > 0 ? (u32)found[l].score : 0x7FFFu) & 0xFFFFu) << (16 * l);
    int rows = max(lane[0].rows, lane[1].rows);
    // each row's edge and letters are loaded two rows ahead (past the rows: unused);
    // pointers at row i, moved on two rows an iteration
    const uint2 border = make_uint2(0u, neg_open);
    const size_t two = 2 * stride;
    uint2* at = edge + stride;
    const unsigned short* letters_at = letters + stride;
    uint2 left0 = first ? border : at[0], left1 = first ? border : at[stride];
    u32 b0 = letters_at[0], b1 = letters_at[stride];
    for (int i = 1; i <= rows; i += 2) {
        const uint2 next0 = first ? border : at[two];
        const uint2 next1 = first ? border : at[two + stride];
        const u32 c0 = letters_at[two], c1 = letters_at[two + stride];
        u32 row_max;
        u32 e = row2(s, ha, hb, row_scores(s, b0), left0, neg_open, neg_extend, row_max);
        if (!last) at[0] = make_uint2(hb[STRIP - 1], e);
        if (__vcmpges2(row_max, best)) look(i, j0, hb, row_max, lane, found, best, rows, snapshot);
        e = row2(s, hb, ha, row_scores(s, b1), left1, neg_open, neg_extend, row_max);
        if (!last) at[stride] = make_uint2(ha[STRIP - 1], e);
        if (__vcmpges2(row_max, best)) look(i + 1, j0, ha, row_max, lane, found, best, rows,
                                              snapshot);
        left0 = next0;
        left1 = next1;
        b0 = c0;
        b1 = c1;
        at += two;
        letters_at += two;
    }
}

// As align_pairs in local mode, two pairs a thread: thread k takes pairs 2k, 2k + 1
// (their Found's j: the strip's thread column before its first). Snapshots: a thread's
// two best rows, [thread][lane][STRIP]. Buffers [row][thread], rows 1 .. the longest target + 4 (rows go in twos, and are
// loaded two ahead): the strips' edge (H, E), and the two lanes' target letters of each
// row (lane 1's in the high byte), copied there first so that the strips read them in
// one coalesced load a row.
extern "C" __global__ void align_local_pairs(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const int* __restrict__ score_in, const int* __restrict__ qend_in,
    const int* __restrict__ tend_in, const int* __restrict__ subst, const int letters,
    const int opening, const int extend, const int best_step, uint2* __restrict__ edge,
    unsigned short* __restrict__ row_letters, uint4* __restrict__ snapshots,
    int* __restrict__ out_score, int* __restrict__ out_q, int* __restrict__ out_t)
{
#if WORD
    // the row word of target letter b: the scores of query letters 0-3 against it
    __shared__ u32 s_row[4];
    if (threadIdx.x < 4) {
        u32 w = 0u;
        for (int a = 0; a < 4; a++)
            if (a < letters && (int)threadIdx.x < letters)
                w |= ((u32)subst[a * letters + threadIdx.x] & 0xFFu) << (8 * a);
        s_row[threadIdx.x] = w;
    }
    __syncthreads();
    const Shared sh = {subst, letters, s_row, nullptr};
#else
    // profiles: 2 x letters x STRIP bytes a thread, one 16-byte unit more between threads
    // (their rows start in different bank groups)
    __shared__ int s_subst[MAX_TABLE];
    extern __shared__ uint4 s_profiles[];
    load_table(s_subst, subst, letters);
    const Shared sh = {s_subst, letters, nullptr,
                       s_profiles + threadIdx.x * (2 * letters * (STRIP / 16) + 1)};
#endif
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    const int threads = (npairs + 1) / 2;
    if (k >= threads) return;
    Lane lane[2];
    Found found[2];
    int columns = 0;
    for (int l = 0; l < 2; l++) {
        const int p = 2 * k + l;
        lane[l] = {codes, codes, 0, 0, 0, 0};
        found[l] = {0, 0, 0};
        if (p >= npairs) continue;  // an idle lane: no columns, no rows
        const long long x = pa[p], y = pb[p];
        lane[l].Q = codes + offsets[x];
        lane[l].T = codes + offsets[y];
#if REVERSE
        lane[l].m = qend_in[p];
        lane[l].n = tend_in[p];
        lane[l].rows = reverse_rows(lane[l].m, lane[l].n, score_in[p], Costs{opening, extend},
                                    best_step);
        found[l] = {score_in[p], lane[l].n + 1, 0};
#else
        lane[l].m = (int)(offsets[x + 1] - offsets[x]);
        lane[l].n = lane[l].rows = (int)(offsets[y + 1] - offsets[y]);
#endif
        columns = max(columns, lane[l].m);
    }
    for (int l = 0; l < 2; l++) lane[l].shift = columns - lane[l].m;
    const u32 neg_open = splat2(-opening), neg_extend = splat2(-extend);
    const size_t stride = (size_t)threads;
    uint4* snapshot = snapshots + (size_t)k * (STRIP / 2);  // the lanes' best rows
    const int rows = max(lane[0].rows, lane[1].rows);
    for (int i = 1; i <= rows + 3; i++)
        row_letters[(size_t)i * stride + k] =
            (unsigned short)(lane_target(lane[0], i) | lane_target(lane[1], i) << 8);
    const int j_first = columns - (columns + STRIP - 1) / STRIP * STRIP;
    for (int j0 = j_first; j0 < columns && max(lane[0].rows, lane[1].rows) > 0; j0 += STRIP)
        strip2(lane, j0, j0 == j_first, j0 + STRIP >= columns, sh, neg_open, neg_extend,
               row_letters + k, edge + k, stride, found, snapshot);
    for (int l = 0; l < 2; l++) {
        const int p = 2 * k + l;
        if (p >= npairs) continue;
        // the lane's column; forward score 0: no cell, coordinates 0
        const int j = found[l].i ? find_column(snapshot, l, found[l]) - lane[l].shift : 0;
#if REVERSE
        out_q[p] = lane[l].m - j + 1;  // 1-based starts (S > 0: always found)
        out_t[p] = lane[l].n - found[l].i + 1;
#else
        out_score[p] = found[l].score;
        out_q[p] = j;
        out_t[p] = found[l].i;
#endif
    }
}
#endif
