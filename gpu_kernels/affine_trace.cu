// Integer affine global alignment with its traceback, choosing among equal-scoring paths
// as vsearch does (backends/cpu/trace_affine.py states the rules and is bit for bit the
// same): one thread per pair, the recurrence of scoring/affine.py, then a walk back from
// (la, lb) that writes the alignment's counts (backends/alignments.py) and, in
// affine_trace, its runs; affine_trace_counts keeps the counts alone (the filter's and the
// distance stage's identities: twice the cells per second of carrying each state's path
// counts forward, measured on an H200).
//
// The recurrence runs in vertical strips of STRIP columns kept in registers while the
// thread walks down A's rows (as affine.cu); the strip's last column (H and E) goes to a
// [row][pair] boundary buffer for the next strip, read AHEAD rows before the row that
// uses it. Each cell's four direction bits
// (trace_affine.py's move byte: H takes E, H takes F, E extends, F extends) go into one
// word per row and strip, moves[((i - 1) * words_per_row + strip) * npairs + pair], so a
// warp's stores are coalesced. Substitution scores: with TABLE 0 (four letters, DNA) a
// column word holds its letter's four int8 scores and a byte permute with sign extension
// picks the row letter's; with TABLE 1 (up to MAX_LETTERS letters: protein matrices) the
// whole table sits in shared memory and a row reads its letter's line of it.
#ifndef STRIP
#define STRIP 8
#endif
static_assert(STRIP == 8, "a strip's moves are one 32-bit word of 4-bit cells");
#ifndef TABLE
#define TABLE 0
#endif
#ifndef AHEAD
#define AHEAD 4  // rows whose left boundary is read before they are computed
#endif
#define MAX_LETTERS 32
#define SUBST_WORDS (TABLE ? MAX_LETTERS * MAX_LETTERS : 16)

typedef unsigned int u32;

#define NEG_SCORE (-(1 << 30))  // score of an impossible state (scoring/affine.py's NEG)
#define TAKES_E 1u
#define TAKES_F 2u
#define E_EXTENDS 4u
#define F_EXTENDS 8u
// moves and runs as backends/alignments.py: a run is length * RUN_ONE + move
#define DIAG 0
#define LEFT 1
#define UP 2
#define RUN_ONE 4
// backends/alignments.py's COUNTS, in order
enum { MATCHES, MISMATCHES, GAPS, OPENINGS, COLUMNS, TERMINAL_GAPS, TERMINAL_OPENINGS,
       QLO, QHI, TLO, THI, NCOUNTS };

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

// The score of H(la, lb), every cell's moves written.
__device__ int fill(const unsigned char* A, const unsigned char* B, int la, int lb,
                    const int* s_subst, int letters, int gap_open_ext, int gap_ext,
                    int end_open_ext, int end_ext, int end_open, int end_extend, int* bnd_h,
                    int* bnd_e,
                    size_t stride, u32* moves, size_t words_per_row)
{
    int score = 0;
    for (int j0 = 1, s = 0; j0 <= lb; j0 += STRIP, s++) {
        const bool final = j0 + STRIP > lb;
        u32 col[STRIP];  // TABLE 0: the column's four scores; TABLE 1: its letter
        int h[STRIP], f[STRIP], ov[STRIP], ev[STRIP];
#pragma unroll
        for (int t = 0; t < STRIP; t++) {
            const int j = j0 + t;
            const int b = j <= lb ? B[j - 1] : 0;  // columns past lb: computed, never read
            col[t] = TABLE ? (u32)b
                           : (u32)(s_subst[b] & 0xFF) | ((u32)(s_subst[4 + b] & 0xFF) << 8)
                                 | ((u32)(s_subst[8 + b] & 0xFF) << 16)
                                 | ((u32)(s_subst[12 + b] & 0xFF) << 24);
            h[t] = -end_open - j * end_extend;  // row 0
            f[t] = NEG_SCORE;
            ov[t] = j == lb ? end_open_ext : gap_open_ext;  // vertical gaps: end ones in lb
            ev[t] = j == lb ? end_ext : gap_ext;
        }
        int up_left = j0 == 1 ? 0 : -end_open - (j0 - 1) * end_extend;  // H(0, j0 - 1)
        // H and E of (i, j0 - 1) and A's letter are read AHEAD rows before row i uses them
        // (a global load takes several rows' work); past la the reads repeat row la.
        // Slot r holds row i + r.
        int next_h[AHEAD], next_e[AHEAD], next_a[AHEAD];
        const auto fetch = [&](int r, int row) {
            row = min(row, la);
            next_h[r] = j0 == 1 ? -end_open - row * end_extend : bnd_h[row * stride];
            next_e[r] = j0 == 1 ? NEG_SCORE : bnd_e[row * stride];
            next_a[r] = A[row - 1];
        };
#pragma unroll
        for (int r = 0; r < AHEAD; r++) fetch(r, 1 + r);
        for (int i0 = 1; i0 <= la; i0 += AHEAD) {
#pragma unroll
            for (int r = 0; r < AHEAD; r++) {
                const int i = i0 + r;
                if (i > la) break;
                int left_h = next_h[r], left_e = next_e[r];  // H and E of (i, j0 - 1)
                const int a = next_a[r];
                fetch(r, i + AHEAD);
                int diag = up_left;
                up_left = left_h;
                const u32 selector = score_selector(TABLE ? 0 : a);
                const int* line = s_subst + (TABLE ? a * letters : 0);
                const int oh = i == la ? end_open_ext : gap_open_ext;  // horizontal gaps
                const int eh = i == la ? end_ext : gap_ext;
                u32 word = 0u;
#pragma unroll
                for (int t = 0; t < STRIP; t++) {
                    const int f_ext = f[t] - ev[t], f_open = h[t] - ov[t];
                    const bool f_extends = f_ext > f_open;  // ties open
                    const int nf = max(f_ext, f_open);
                    const int e_ext = left_e - eh, e_open = left_h - oh;
                    const bool e_extends = e_ext > e_open;
                    const int ne = max(e_ext, e_open);
                    const int d = diag + (TABLE ? line[col[t]] : substitution(col[t], selector));
                    const bool takes_f = nf > d;  // ties: D, then F, then E
                    int nh = max(d, nf);
                    const bool takes_e = ne > nh;
                    nh = max(nh, ne);
                    word |= ((u32)takes_e | ((u32)takes_f << 1) | ((u32)e_extends << 2)
                             | ((u32)f_extends << 3)) << (4 * t);
                    diag = h[t];
                    h[t] = left_h = nh;
                    f[t] = nf;
                    left_e = ne;
                }
                moves[((size_t)(i - 1) * words_per_row + s) * stride] = word;
                if (!final) {
                    bnd_h[i * stride] = left_h;
                    bnd_e[i * stride] = left_e;
                }
            }
        }
        if (final) {
#pragma unroll
            for (int t = 0; t < STRIP; t++)
                if (j0 + t == lb) score = h[t];
        }
    }
    return score;
}

// Walk the moves back from (la, lb): the counts, as trace_affine.py's _trace, and with
// RUNS the runs (start to end) at `runs`; returns the number of runs.
template <bool RUNS>
__device__ int walk(const unsigned char* A, const unsigned char* B, int la, int lb,
                    const u32* moves, size_t words_per_row, size_t stride, int* runs,
                    int* counts)
{
    int matches = 0, mismatches = 0, gaps = 0, openings = 0, columns = 0;
    int i = la, j = lb, n_runs = 0, prev = -1, state = DIAG;
    int run = 0, last = 0;  // the run being walked; the alignment's last run
    while (i > 0 || j > 0) {
        int move;
        if (i == 0) {
            move = LEFT;
        } else if (j == 0) {
            move = UP;
        } else {
            const u32 m = (moves[((size_t)(i - 1) * words_per_row + (j - 1) / STRIP) * stride]
                           >> (4 * ((j - 1) % STRIP))) & 15u;
            move = state == DIAG ? ((m & TAKES_E) ? LEFT : ((m & TAKES_F) ? UP : DIAG)) : state;
            if (move == LEFT) state = (m & E_EXTENDS) ? LEFT : DIAG;
            else if (move == UP) state = (m & F_EXTENDS) ? UP : DIAG;
        }
        if (move == DIAG) {
            if (A[i - 1] == B[j - 1]) matches++;
            else mismatches++;
            i--;
            j--;
        } else {
            gaps++;
            if (move != prev) openings++;
            if (move == LEFT) j--;
            else i--;
        }
        if (move == prev) {
            run += RUN_ONE;
        } else {
            if (n_runs == 1) last = run;
            if (RUNS && n_runs > 0) runs[n_runs - 1] = run;
            run = RUN_ONE + move;
            n_runs++;
        }
        prev = move;
        columns++;
    }
    if (n_runs == 1) last = run;
    const int first = run;  // walked last
    if (RUNS) {
        runs[n_runs - 1] = run;
        for (int r = 0; r < n_runs / 2; r++) {  // written end to start
            const int t = runs[r];
            runs[r] = runs[n_runs - 1 - r];
            runs[n_runs - 1 - r] = t;
        }
    }
    // vsearch's align_trim: a leading and a trailing gap run are terminal
    int q_left = 0, t_left = 0, q_right = 0, t_right = 0;
    if (first % RUN_ONE == UP) q_left = first / RUN_ONE;
    else if (first % RUN_ONE == LEFT) t_left = first / RUN_ONE;
    if (n_runs > 1) {
        if (last % RUN_ONE == UP) q_right = last / RUN_ONE;
        else if (last % RUN_ONE == LEFT) t_right = last / RUN_ONE;
    }
    counts[MATCHES] = matches;
    counts[MISMATCHES] = mismatches;
    counts[GAPS] = gaps;
    counts[OPENINGS] = openings;
    counts[COLUMNS] = columns;
    counts[TERMINAL_GAPS] = q_left + t_left + q_right + t_right;
    counts[TERMINAL_OPENINGS] = (q_left + t_left > 0) + (q_right + t_right > 0);
    counts[QLO] = q_left + 1;
    counts[QHI] = la - q_right;
    counts[TLO] = t_left + 1;
    counts[THI] = lb - t_right;
    return n_runs;
}

// Per pair (pa[k] as A, the query; pb[k] as B, the target): score[k], counts[k * NCOUNTS
// ...] and with RUNS n_runs[k] runs at runs[run_start[k] ...] (la + lb slots). subst:
// letters x letters (TABLE 0: 4 letters, values within int8; TABLE 1: at most
// MAX_LETTERS); the gap steps (open + extend, extend) inside and at the ends; end_open,
// end_extend for the borders; bnd: two planes (H, E) of (longest A + 1) * npairs ints;
// moves: longest A * words_per_row * npairs words.
template <bool RUNS>
__device__ void trace(const unsigned char* codes, const long long* offsets,
                      const long long* pa, const long long* pb, int npairs, const int* subst,
                      int letters, int gap_open_ext, int gap_ext, int end_open_ext, int end_ext,
                      int end_open, int end_extend, int* bnd, long long plane, u32* moves,
                      long long words_per_row, const long long* run_start, int* runs,
                      int* n_runs, int* counts, int* score)
{
    __shared__ int s_subst[SUBST_WORDS];
    for (int w = threadIdx.x; w < letters * letters; w += blockDim.x) s_subst[w] = subst[w];
    __syncthreads();
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= npairs) return;
    const long long x = pa[k], y = pb[k];
    const unsigned char* A = codes + offsets[x];
    const unsigned char* B = codes + offsets[y];
    const int la = (int)(offsets[x + 1] - offsets[x]);
    const int lb = (int)(offsets[y + 1] - offsets[y]);
    const size_t stride = (size_t)npairs;
    score[k] = fill(A, B, la, lb, s_subst, letters, gap_open_ext, gap_ext, end_open_ext,
                    end_ext, end_open, end_extend, bnd + k, bnd + plane + k, stride, moves + k,
                    (size_t)words_per_row);
    const int found = walk<RUNS>(A, B, la, lb, moves + k, (size_t)words_per_row, stride,
                                 RUNS ? runs + run_start[k] : nullptr,
                                 counts + (size_t)k * NCOUNTS);
    if (RUNS) n_runs[k] = found;
}

// The alignments: counts, runs and scores.
extern "C" __global__ void affine_trace(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const int* __restrict__ subst, const int letters, const int gap_open_ext, const int gap_ext,
    const int end_open_ext, const int end_ext, const int end_open, const int end_extend,
    int* __restrict__ bnd, const long long plane, u32* __restrict__ moves,
    const long long words_per_row, const long long* __restrict__ run_start,
    int* __restrict__ runs, int* __restrict__ n_runs, int* __restrict__ counts,
    int* __restrict__ score)
{
    trace<true>(codes, offsets, pa, pb, npairs, subst, letters, gap_open_ext, gap_ext,
                end_open_ext, end_ext, end_open, end_extend, bnd, plane, moves, words_per_row,
                run_start, runs, n_runs, counts, score);
}

// Counts and scores only (the contract's affine_counts): no runs are kept.
extern "C" __global__ void affine_trace_counts(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const int* __restrict__ subst, const int letters, const int gap_open_ext, const int gap_ext,
    const int end_open_ext, const int end_ext, const int end_open, const int end_extend,
    int* __restrict__ bnd, const long long plane, u32* __restrict__ moves,
    const long long words_per_row, int* __restrict__ counts, int* __restrict__ score)
{
    trace<false>(codes, offsets, pa, pb, npairs, subst, letters, gap_open_ext, gap_ext,
                 end_open_ext, end_ext, end_open, end_extend, bnd, plane, moves, words_per_row,
                 nullptr, nullptr, nullptr, counts, score);
}
