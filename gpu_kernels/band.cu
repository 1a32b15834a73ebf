// Exact pruning's banded alignment (docs/pruning.md), one thread per pair, computing
// exactly what src/seqpairs/backends/cpu/band.py computes.
//
// seqdist_band: the SeqDist recurrence (docs/seqdist.md) over the cells |j - i| <= WIDTH,
// the last column and the last row, each cell carrying whether it is exact (the full
// matrix's cost, counts and move), a lower bound on the full matrix's cost where it is
// not, and an upper bound. Per pair: exact (u8), cost (double: exact or lower bound),
// packed counts (u64, as backends/common.py lays them out: length | matches << 16 |
// first << 32 | last << 48; valid where exact) and upper (double).
//
// Layout: row i's band is a register array indexed by the diagonal offset o = j - i (slot
// t = o + WIDTH): cell (i, j) reads (i-1, j-1) from slot t (the previous row's value, not
// yet overwritten), (i-1, j) from slot t + 1 and (i, j-1) from slot t - 1 (this row's),
// so each row updates the slots in increasing order. The last column's cell, when it is
// outside the band, is a separate register; the last row, whose cells all count, reads
// the row before it from local memory.
#ifndef WIDTH
#define WIDTH 8
#endif
#define SLOTS (2 * WIDTH + 1)
// LOWER > WIDTH: a lower band of that half-width bounds the cells outside the band (the
// recurrence with every paid gap at the least it can cost there: the cheapest gap where
// it may extend a homopolymer, else the plain gap; docs/pruning.md, section 2), computed
// first by seqdist_lower, in integer units of 1 / LOWER_UNITS (scoring/seqdist.py:
// lower_weights; LOWER_PLAIN_GAP, LOWER_LEAST_GAP and LOWER_SHRINK, which makes the
// substitutions, from the scheme).
#ifndef LOWER
#define LOWER 0
#endif
#if LOWER > 0 && !(defined(LOWER_PLAIN_GAP) && defined(LOWER_LEAST_GAP) && defined(LOWER_SHRINK) && defined(LOWER_UNITS))
#error "a lower band needs LOWER_PLAIN_GAP, LOWER_LEAST_GAP, LOWER_SHRINK and LOWER_UNITS"
#endif
#define LOW_SLOTS (2 * LOWER + 1)
#if !defined(GAP) || !defined(HOMOPOLYMER_GAP) || !defined(CHEAPEST_GAP_SHRUNK)
#error "GAP, HOMOPOLYMER_GAP and CHEAPEST_GAP_SHRUNK (the scheme's costs) must be defined"
#endif

typedef unsigned long long u64;

#define INF __longlong_as_double(0x7FF0000000000000ll)
#define FIELD_MASK 0xFFFFull
#define MATCH_ONE (1ull << 16)
#define FIRST_SHIFT 32
#define LAST_SHIFT 48
#define START (FIELD_MASK << FIRST_SHIFT)  // counts of an empty path
#define NO_LETTER (-1)
enum { DIAG = 0, LEFT = 1, UP = 2 };

// The pair's sequences (A: rows, B: columns) and lengths.
struct Pair {
    const unsigned char* A;
    const unsigned char* B;
    int la, lb;
};

__device__ __forceinline__ Pair pair_at(const unsigned char* codes, const long long* offsets,
                                        long long a, long long b)
{
    return {codes + offsets[a], codes + offsets[b], (int)(offsets[a + 1] - offsets[a]),
            (int)(offsets[b + 1] - offsets[b])};
}

// The smaller of two costs. Costs are sums of costs >= 0 and INF, never NaN nor -0.0, so a
// compare and a select give fmin's value; fmin's NaN handling takes four more instructions.
__device__ __forceinline__ double least(double a, double b) { return b < a ? b : a; }

#define ANY_MOVE ((1 << DIAG) | (1 << LEFT) | (1 << UP))

struct Cell {
    double h;  // cost if exact, else a lower bound on it
    // exact: the packed counts (its upper bound is h); else the upper bound's bits (its
    // counts unused): one register pair where two took 34 of a band of 17's registers
    u64 v;
    // the moves it may have (bits 1 << DIAG, LEFT, UP; exact cells: its move) | exact << 3,
    // in one register: a band of 17 cells holds 17 of them
    unsigned int f;
    __device__ __forceinline__ int m() const { return f & 7u; }
    __device__ __forceinline__ bool x() const { return f >> 3; }
    __device__ __forceinline__ double u() const { return x() ? h : __longlong_as_double(v); }
    __device__ __forceinline__ u64 p() const { return v; }  // exact cells only
};

__device__ __forceinline__ Cell cell_of(double h, double u, u64 p, int moves, bool exact)
{
    return {h, exact ? p : (u64)__double_as_longlong(u), (unsigned int)moves | (exact ? 8u : 0u)};
}

__device__ __forceinline__ Cell row0(int j)  // H(0, j) = GAP j, LEFT moves
{
    const double h = GAP * (double)j;
    return cell_of(h, h, START + (u64)j, 1 << LEFT, true);
}

__device__ __forceinline__ Cell col0(int i)  // H(i, 0) = GAP i, UP moves
{
    const double h = GAP * (double)i;
    return cell_of(h, h, START + (u64)i, 1 << UP, true);
}

// A cell outside the computed set: i < la, j < lb, so at least |i - j| paid gap moves.
__device__ __forceinline__ Cell out(int i, int j)
{
    return cell_of(CHEAPEST_GAP_SHRUNK * (double)abs(i - j), INF, 0ull, ANY_MOVE, false);
}

#if LOWER > 0
// A cell outside the computed set with the lower band's bound (units).
__device__ __forceinline__ Cell bounded(int units)
{
    return cell_of(__dmul_rn(__int2double_rn(units), 1.0 / LOWER_UNITS), INF, 0ull, ANY_MOVE,
                   false);
}
#endif

__device__ __forceinline__ u64 diag_step(u64 p, bool eq)
{
    p += 1ull + (eq ? MATCH_ONE : 0ull);
    const u64 length = p & FIELD_MASK;
    const u64 first = min((p >> FIRST_SHIFT) & FIELD_MASK, length);
    return (p & ~((FIELD_MASK << LAST_SHIFT) | (FIELD_MASK << FIRST_SHIFT)))
           | (first << FIRST_SHIFT) | (length << LAST_SHIFT);
}

// One cell, as backends/cpu/band.py's _cell (the same values: the multiplications by
// gap_row/gap_col, 0 or 1, are exact, and the upper bounds are computed only where a
// neighbour is inexact, as they decide nothing otherwise).
__device__ __forceinline__ Cell cell(int a, int b, int prev_b, const double* subst_a,
                                     double gap_row, double gap_col, u64 inc_row,
                                     u64 inc_col, const Cell& d, const Cell& l, const Cell& up)
{
    const bool eq_a = b == a;
    const bool same_b = b == prev_b;
    // the gap cost each move the left cell may have gives (docs/seqdist.md, last(i, j - 1))
    const bool may_up = (l.m() >> UP) & 1, may_left = (l.m() >> LEFT) & 1;
    const bool may_diag = (l.m() >> DIAG) & 1;
    const bool homopolymer = (may_up && eq_a) || (may_left && same_b)
                             || (may_diag && eq_a && same_b);
    const bool plain = (may_up && !eq_a) || (may_left && !same_b)
                       || (may_diag && !(eq_a && same_b));
    double g_lo, g_hi;
    if (homopolymer && plain) {  // either gap cost is possible
        g_lo = fmin((double)GAP, (double)HOMOPOLYMER_GAP);
        g_hi = fmax((double)GAP, (double)HOMOPOLYMER_GAP);
    } else {
        g_lo = g_hi = homopolymer ? HOMOPOLYMER_GAP : GAP;
    }
    const bool g_known = g_lo == g_hi;
    const double s = subst_a[b];
    // g * gap_row + h in one rounding: the product is exact (gap_row is 0 or 1), so the
    // fused sum is the CPU's product then sum, bit for bit, in one instruction
    double c1 = __dadd_rn(d.h, s);
    double c2 = __fma_rn(g_lo, gap_row, l.h);
    double c3 = __fma_rn(g_lo, gap_col, up.h);
    const bool e1 = d.x();
    const bool e2 = l.x() && (g_known || gap_row == 0.0);
    const bool e3 = up.x() && (g_known || gap_col == 0.0);
    if (!(e1 && e2 && e3)) {  // the upper bounds decide (an exact cell's is its cost)
        const double u1 = __dadd_rn(d.u(), s);
        const double u2 = __fma_rn(g_hi, gap_row, l.u());
        const double u3 = __fma_rn(g_hi, gap_col, up.u());
        const double upper = least(least(u1, u2), u3);
        // the moves SeqDist's rule may pick given the candidates' bounds (lower c, upper u)
        const bool p1 = c1 < u2 && c1 < u3;
        const bool p2 = c2 <= u1 && c2 < u3;
        const bool p3 = c3 <= u1 && c3 <= u2;
        if ((p1 && !e1) || (p2 && !e2) || (p3 && !e3))
            return cell_of(least(least(c1, c2), c3), upper, 0ull,
                    (p1 << DIAG) | (p2 << LEFT) | (p3 << UP), false);
        // every move it may pick is exact: the others are never chosen
        c1 = p1 ? c1 : INF;
        c2 = p2 ? c2 : INF;
        c3 = p3 ? c3 : INF;
    }
    if (c1 < c2) {
        if (c1 < c3) return cell_of(c1, c1, diag_step(d.p(), eq_a), 1 << DIAG, true);
        return cell_of(c3, c3, up.p() + inc_col, 1 << UP, true);
    }
    if (c2 < c3) return cell_of(c2, c2, l.p() + inc_row, 1 << LEFT, true);
    return cell_of(c3, c3, up.p() + inc_col, 1 << UP, true);
}

#if LOWER > WIDTH
// seqdist_lower: each pair's lower band, rows 1 .. la - 1, in registers `low` (slot s = j - i +
// LOWER), of which seqdist_band reads what lies next to its band (EDGES a row, [row][edge][pair]:
// L(i, i - WIDTH - 1), L(i, i + WIDTH + 1), L(i, lb - 1)) and row la - 1 whole ([slot][pair]).
// Apart, the band keeps only its own cells in registers: with the lower band beside them it
// took all 255 and ran 8 warps an SM.
#define EDGES 3
#define WINDOW_WORDS ((LOW_SLOTS + 1 + 15) / 16)
extern "C" __global__ void seqdist_lower(const unsigned char* __restrict__ codes,
                                         const long long* __restrict__ offsets,
                                         const long long* __restrict__ pa,
                                         const long long* __restrict__ pb, int n,
                                         const double* __restrict__ subst,
                                         int* __restrict__ edges, int* __restrict__ last_row)
{
    __shared__ int s_low[16];  // the lower band's substitutions (the scheme's lower_weights)
    if (threadIdx.x < 16)
        s_low[threadIdx.x] = (int)floor(__dmul_rn(__dmul_rn(subst[threadIdx.x], LOWER_SHRINK),
                                                  (double)LOWER_UNITS));
    __syncthreads();
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const auto [A, B, la, lb] = pair_at(codes, offsets, pa[k], pb[k]);
    int low[LOW_SLOTS];  // row i - 1's lower band, then row i's
#pragma unroll
    for (int s = 0; s < LOW_SLOTS; s++) low[s] = LOWER_PLAIN_GAP * max(s - LOWER, 0);
    // Rows LOWER + 2 .. lb - 2 - LOWER hold only columns 2 .. lb - 2: their cells need no
    // test, and B's letters slide along in registers, two bits each (letter t of `window` is
    // B[i - LOWER - 2 + t]: B[j-2] and B[j-1] of slot s are letters s and s + 1), one read a
    // row.
    const int fast_first = LOWER + 2;
    unsigned int window[WINDOW_WORDS];  // the first middle row's, then shifted a row at a time
#pragma unroll
    for (int w = 0; w < WINDOW_WORDS; w++) window[w] = 0u;
    if (fast_first + LOWER <= lb - 2) {
#pragma unroll
        for (int t = 0; t <= LOW_SLOTS; t++)
            window[t / 16] |= (unsigned int)B[t] << (2 * (t % 16));
    }
    for (int i = 1; i < la; i++) {
        const int a = A[i - 1];
        const int* low_a = s_low + 4 * a;
        int col = 0;  // L(i, lb - 1) where the row's lower band holds it
        if (i >= fast_first && i + LOWER <= lb - 2) {
            int before = window[0] & 3;
#pragma unroll
            for (int s = 0; s < LOW_SLOTS; s++) {  // the general row's cells, untested
                const int up = s + 1 < LOW_SLOTS ? low[s + 1] : LOWER_LEAST_GAP * (LOWER + 1);
                const int l = s > 0 ? low[s - 1] : LOWER_LEAST_GAP * (LOWER + 1);
                const int b = (window[(s + 1) / 16] >> (2 * ((s + 1) % 16))) & 3;
                const int gap = b == a || b == before ? LOWER_LEAST_GAP : LOWER_PLAIN_GAP;
                before = b;
                low[s] = __viaddmin_s32(l, gap, min(low[s] + low_a[b], up + gap));
            }
#pragma unroll
            for (int w = 0; w < WINDOW_WORDS; w++)  // the next row's letters
                window[w] = __funnelshift_r(window[w],
                                            w + 1 < WINDOW_WORDS ? window[w + 1] : 0u, 2);
            window[LOW_SLOTS / 16] |= (unsigned int)B[i + LOWER] << (2 * (LOW_SLOTS % 16));
        } else {
            // B[j-2] of the first slot's column j (none at j <= 1): a gap into (i, j) extends a
            // homopolymer only if B[j-1] is A[i-1] or B[j-2]
            int before = i - LOWER >= 2 ? B[i - LOWER - 2] : NO_LETTER;
#pragma unroll
            for (int s = 0; s < LOW_SLOTS; s++) {  // in place: slots s, s + 1 hold row i - 1
                const int j = i + s - LOWER;
                if (j == 0) {
                    low[s] = LOWER_PLAIN_GAP * i;
                } else if (j > 0 && j < lb) {
                    const int up = s + 1 < LOW_SLOTS ? low[s + 1]
                                   : (i == 1 ? LOWER_PLAIN_GAP * j
                                             : LOWER_LEAST_GAP * (LOWER + 1));
                    const int l = s > 0 ? low[s - 1]
                                  : (j == 1 ? LOWER_PLAIN_GAP * i : LOWER_LEAST_GAP * (LOWER + 1));
                    const int b = B[j - 1];
                    const int gap = b == a || b == before ? LOWER_LEAST_GAP : LOWER_PLAIN_GAP;
                    before = b;
                    // the left neighbour last: the row's chain is one add-and-min a cell
                    low[s] = __viaddmin_s32(l, gap, min(low[s] + low_a[b], up + gap));
                    if (j == lb - 1) col = low[s];
                }
            }
        }
        int* row_edges = edges + (size_t)i * EDGES * n + k;
        row_edges[0] = low[LOWER - WIDTH - 1];
        row_edges[n] = low[LOWER + WIDTH + 1];
        row_edges[2 * (size_t)n] = col;
    }
#pragma unroll
    for (int s = 0; s < LOW_SLOTS; s++) last_row[(size_t)s * n + k] = low[s];
}
#endif

// seqdist_band: with a lower band (LOWER > WIDTH), `edges` and `last_row` hold what
// seqdist_lower wrote for the same pairs.
extern "C" __global__ void seqdist_band(const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
             const long long* __restrict__ pa, const long long* __restrict__ pb, int n,
             const double* __restrict__ subst, unsigned char* __restrict__ out_exact,
             double* __restrict__ out_cost, u64* __restrict__ out_packed,
             double* __restrict__ out_upper, const int* __restrict__ edges,
             const int* __restrict__ last_row)
{
    __shared__ double s_subst[16];
    if (threadIdx.x < 16) s_subst[threadIdx.x] = subst[threadIdx.x];
    __syncthreads();
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const auto [A, B, la, lb] = pair_at(codes, offsets, pa[k], pb[k]);

    Cell band[SLOTS];
#pragma unroll
    for (int t = 0; t < SLOTS; t++) {
        const int j = t - WIDTH;
        band[t] = j >= 0 && j <= lb ? row0(j) : cell_of(INF, INF, 0ull, ANY_MOVE, false);
    }
    Cell last_col = row0(lb);  // the latest cell of column lb
#if LOWER > WIDTH
    Cell low_col = bounded(LOWER_PLAIN_GAP * (lb - 1));  // the bound at (i, lb - 1)
#endif
    for (int i = 1; i < la; i++) {
        const int a = A[i - 1];
        const double* subst_a = s_subst + 4 * a;
#if LOWER > WIDTH
        // (i - 1, i + WIDTH), above the band's last slot (row 0's: never read)
        const Cell low_up = bounded(i > 1 ? edges[((size_t)(i - 1) * EDGES + 1) * n + k] : 0);
        const Cell low_diag_col = low_col;  // (i - 1, lb - 1)
        low_col = lb - 1 > 0 && abs(lb - 1 - i) <= LOWER
                  ? bounded(edges[((size_t)i * EDGES + 2) * n + k]) : out(i, lb - 1);
#endif
        // left of the band's first cell
        const int j_left = i - WIDTH - 1;
#if LOWER > WIDTH
        Cell left = j_left == 0 ? col0(i)
                    : (j_left > 0 ? bounded(edges[(size_t)i * EDGES * n + k]) : band[0]);
#else
        Cell left = j_left == 0 ? col0(i) : (j_left > 0 ? out(i, j_left) : band[0]);
#endif
#pragma unroll
        for (int t = 0; t < SLOTS; t++) {
            const int j = i + t - WIDTH;
            if (j == 0) {
                band[t] = col0(i);
            } else if (j > 0 && j <= lb) {
#if LOWER > WIDTH
                const Cell up = t + 1 < SLOTS ? band[t + 1]
                                : (j == lb ? last_col : (i == 1 ? row0(j) : low_up));
#else
                const Cell up = t + 1 < SLOTS ? band[t + 1]
                                : (j == lb ? last_col : (i == 1 ? row0(j) : out(i - 1, j)));
#endif
                const Cell l = t > 0 ? band[t - 1] : left;
                const int b = B[j - 1];
                const int prev_b = j > 1 ? B[j - 2] : NO_LETTER;
                const bool at_lb = j == lb;
                band[t] = cell(a, b, prev_b, subst_a, 1.0, at_lb ? 0.0 : 1.0, 1ull,
                               at_lb ? 0ull : 1ull, band[t], l, up);
                if (at_lb) last_col = band[t];
            }
        }
        if (abs(lb - i) > WIDTH) {  // column lb outside the band
            const int b = B[lb - 1];
            const int prev_b = lb > 1 ? B[lb - 2] : NO_LETTER;
#if LOWER > WIDTH
            const Cell l = lb - 1 - i == WIDTH ? band[SLOTS - 1]
                           : (lb - 1 == 0 ? col0(i) : low_col);
            const Cell d = i == 1 ? row0(lb - 1) : (lb - 1 == 0 ? col0(i - 1) : low_diag_col);
#else
            const Cell l = lb - 1 - i == WIDTH ? band[SLOTS - 1]
                           : (lb - 1 == 0 ? col0(i) : out(i, lb - 1));
            const Cell d = i == 1 ? row0(lb - 1) : (lb - 1 == 0 ? col0(i - 1) : out(i - 1, lb - 1));
#endif
            last_col = cell(a, b, prev_b, subst_a, 1.0, 0.0, 1ull, 0ull, d, l, last_col);
        }
    }
    // The last row: every column, reading row la - 1 (its band from local memory).
    Cell prev[SLOTS];
#pragma unroll
    for (int t = 0; t < SLOTS; t++) prev[t] = band[t];
    const int i = la;
    const int a = A[i - 1];
    const double* subst_a = s_subst + 4 * a;
    Cell left = col0(i);
    Cell up = la == 1 ? row0(0) : col0(la - 1);  // (la - 1, 0)
    for (int j = 1; j <= lb; j++) {
        const Cell d = up;  // (la - 1, j - 1)
        const int o = j - (la - 1);
        if (la == 1) up = row0(j);
        else if (j == lb) up = last_col;
        else if (o >= -WIDTH && o <= WIDTH) up = prev[o + WIDTH];
#if LOWER > WIDTH
        else if (o >= -LOWER && o <= LOWER) up = bounded(last_row[(size_t)(o + LOWER) * n + k]);
#endif
        else up = out(la - 1, j);
        const int b = B[j - 1];
        const int prev_b = j > 1 ? B[j - 2] : NO_LETTER;
        const bool at_lb = j == lb;
        left = cell(a, b, prev_b, subst_a, 0.0, at_lb ? 0.0 : 1.0, 0ull, at_lb ? 0ull : 1ull,
                    d, left, up);
    }
    out_exact[k] = left.x();
    out_cost[k] = left.h;
    out_packed[k] = left.x() ? left.p() : 0ull;
    out_upper[k] = left.u();
}

// seqdist_upper: an upper bound on the cost, the cheapest path through the same cells
// with every paid gap at the dearer gap cost (backends/cpu/band.py: _upper_group), in
// integer units of 1 / LOWER_UNITS (scoring/seqdist.py: upper_weights; UPPER_GAP and
// UPPER_DEAR from the scheme, the substitutions an argument): exact int32 sums below
// 2^29, a three-way minimum an instruction (Hopper's DPX), where doubles took a DADD and
// a DSETP and two FSELs a minimum.
#if !defined(UPPER_GAP) || !defined(UPPER_DEAR) || !defined(LOWER_UNITS)
#error "UPPER_GAP, UPPER_DEAR and LOWER_UNITS (the scheme's upper_weights) must be defined"
#endif
#define UPPER_INF (1 << 30)  // outside the band: plus one weight, still above every path

__device__ __forceinline__ int least3(int a, int b, int c) { return __vimin3_s32(a, b, c); }

extern "C" __global__ void seqdist_upper(const unsigned char* __restrict__ codes,
                                         const long long* __restrict__ offsets,
                                         const long long* __restrict__ pa,
                                         const long long* __restrict__ pb, int n,
                                         const int* __restrict__ subst,
                                         double* __restrict__ out_upper)
{
    __shared__ int s_subst[16];
    if (threadIdx.x < 16) s_subst[threadIdx.x] = subst[threadIdx.x];
    __syncthreads();
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const int dear = UPPER_DEAR;
    const auto [A, B, la, lb] = pair_at(codes, offsets, pa[k], pb[k]);
    int band[SLOTS];
#pragma unroll
    for (int t = 0; t < SLOTS; t++) {
        const int j = t - WIDTH;
        band[t] = j >= 0 && j <= lb ? UPPER_GAP * j : UPPER_INF;
    }
    int last_col = UPPER_GAP * lb;
    // Rows WIDTH + 2 .. lb - 1 - WIDTH hold only columns 2 .. lb - 1: their cells need no
    // test (the neighbours outside the band are UPPER_INF, the gaps paid), and B's letters
    // of the band slide along in registers, one read a row.
    const int fast_first = WIDTH + 2;
    int window[SLOTS];  // B[i - WIDTH - 1 + t] in a fast row: B[1 + t] in the first
#pragma unroll
    for (int t = 0; t < SLOTS; t++) window[t] = fast_first + WIDTH <= lb - 1 ? B[1 + t] : 0;
    // A's letter and the window's next letter are read a row before they are used (a
    // global load takes longer than a row)
    int next_a = A[0];
    int next_b = B[min(WIDTH, lb - 1)];
    for (int i = 1; i < la; i++) {
        const int* subst_a = s_subst + 4 * next_a;
        const int b_in = next_b;  // B[i + WIDTH - 1] where a fast row reads it
        next_a = A[i];
        next_b = B[min(i + WIDTH, lb - 1)];
        if (i >= fast_first && i + WIDTH <= lb - 1) {
            if (i > fast_first) {
#pragma unroll
                for (int t = 0; t + 1 < SLOTS; t++) window[t] = window[t + 1];
                window[SLOTS - 1] = b_in;
            }
#pragma unroll
            for (int t = 0; t < SLOTS; t++) {
                const int up = t + 1 < SLOTS ? band[t + 1] : UPPER_INF;
                const int l = t > 0 ? band[t - 1] : UPPER_INF;
                band[t] = least3(band[t] + subst_a[window[t]], l + dear, up + dear);
            }
        } else {
            const int j_left = i - WIDTH - 1;
            const int left = j_left == 0 ? UPPER_GAP * i : UPPER_INF;
#pragma unroll
            for (int t = 0; t < SLOTS; t++) {
                const int j = i + t - WIDTH;
                if (j == 0) {
                    band[t] = UPPER_GAP * i;
                } else if (j > 0 && j <= lb) {
                    const int up = t + 1 < SLOTS ? band[t + 1]
                                   : (j == lb ? last_col : (i == 1 ? UPPER_GAP * j : UPPER_INF));
                    const int l = t > 0 ? band[t - 1] : left;
                    band[t] = least3(band[t] + subst_a[B[j - 1]], l + dear,
                                     up + (j == lb ? 0 : dear));
                    if (j == lb) last_col = band[t];
                }
            }
        }
        if (abs(lb - i) > WIDTH) {
            const int l = lb - 1 - i == WIDTH ? band[SLOTS - 1]
                          : (lb - 1 == 0 ? UPPER_GAP * i : UPPER_INF);
            const int d = i == 1 ? UPPER_GAP * (lb - 1)
                          : (lb - 1 == 0 ? UPPER_GAP * (i - 1) : UPPER_INF);
            last_col = least3(d + subst_a[B[lb - 1]], l + dear, last_col);
        }
    }
    int prev[SLOTS];
#pragma unroll
    for (int t = 0; t < SLOTS; t++) prev[t] = band[t];
    const int* subst_a = s_subst + 4 * A[la - 1];
    int left = UPPER_GAP * la;
    int up = la == 1 ? 0 : UPPER_GAP * (la - 1);  // (la - 1, 0)
    for (int j = 1; j <= lb; j++) {
        const int d = up;
        const int o = j - (la - 1);
        if (la == 1) up = UPPER_GAP * j;
        else if (j == lb) up = last_col;
        else if (o >= -WIDTH && o <= WIDTH) up = prev[o + WIDTH];
        else up = UPPER_INF;
        left = least3(d + subst_a[B[j - 1]], left, up + (j == lb ? 0 : dear));
    }
    out_upper[k] = (double)left * (1.0 / LOWER_UNITS);  // exact: a power of two
}
