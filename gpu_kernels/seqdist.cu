// SeqDist alignment (AmpliconNoise, ../shared/SEQDIST.md), one thread per pair.
//
// Computes exactly what src/seqpairs/backends/cpu.py computes: per pair the cost H(la, lb)
// (IEEE double, same additions in the same order) and the packed counts of the chosen path
// (16 bits each from the low end: SeqDist length, matches, pending gaps, aligned columns).
//
// Layout: B's columns are processed in vertical strips of STRIP columns whose row values
// stay in registers while the thread walks down all rows of A; only the strip's last
// column (cost, counts, move) goes to a global boundary buffer, laid out [row][pair] so
// that a warp's accesses are coalesced. Register arrays are indexed only by unrolled
// loop counters so they stay in registers.
#ifndef STRIP
#define STRIP 8
#endif

typedef unsigned long long u64;

#define DIAG 0
#define LEFT 1
#define UP 2

#define FIELD 16
#define LEN_ONE 1ULL
#define MATCH_ONE (1ULL << FIELD)
#define PENDING_ONE (1ULL << (2 * FIELD))
#define ALIGNED_ONE (1ULL << (3 * FIELD))

#define GAP 15.0
#define HOMOPOLYMER_GAP 4.0

// Counts after a gap move: length += inc; pending += inc once an aligned pair was seen.
__device__ __forceinline__ u64 gap_step(u64 p, u64 inc) {
    return p + inc * (LEN_ONE + (p >= ALIGNED_ONE ? PENDING_ONE : 0ULL));
}

// Counts after an aligned pair: pending gaps become aligned columns, plus this one.
__device__ __forceinline__ u64 diag_step(u64 p, bool eq) {
    u64 pending = (p >> (2 * FIELD)) & 0xFFFFULL;
    return p + LEN_ONE + (eq ? MATCH_ONE : 0ULL) + (pending + 1ULL) * ALIGNED_ONE
           - pending * PENDING_ONE;
}

extern "C" __global__ void seqdist_pairs(
    const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
    const long long* __restrict__ pa, const long long* __restrict__ pb, const int npairs,
    const double* __restrict__ subst,  // 4 x 4, SeqDist's A, C, T, G order
    double* __restrict__ bnd_h, u64* __restrict__ bnd_p, unsigned char* __restrict__ bnd_m,
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
    const size_t stride = (size_t)npairs;

    double result_h = 0.0;
    u64 result_p = 0ULL;
    for (int j0 = 1; j0 <= lb; j0 += STRIP) {
        // Strip constants: B's letters, "same letter as the column before", last column.
        int b[STRIP];
        bool same_prev[STRIP], last_col[STRIP];
        int prev_b = j0 >= 2 ? B[j0 - 2] : -1;
#pragma unroll
        for (int t = 0; t < STRIP; t++) {
            const int j = j0 + t;
            b[t] = j <= lb ? B[j - 1] : 0;  // columns past lb are computed and ignored
            same_prev[t] = b[t] == prev_b;
            last_col[t] = j == lb;
            prev_b = b[t];
        }
        // Row 0 of the strip: H(0, j) = 15 j, length j.
        double h[STRIP];
        u64 p[STRIP];
#pragma unroll
        for (int t = 0; t < STRIP; t++) {
            h[t] = GAP * (j0 + t);
            p[t] = (u64)(j0 + t);
        }
        double diag_h = GAP * (j0 - 1);  // H(i-1, j0-1) for i = 1
        u64 diag_p = (u64)(j0 - 1);
        for (int i = 1; i <= la; i++) {
            const int a = A[i - 1];
            const double* sub_a = s_subst + 4 * a;
            // Left neighbour (i, j0-1): column 0, or the previous strip's boundary.
            double left_h;
            u64 left_p;
            int move;
            const size_t at = (size_t)i * stride + k;
            if (j0 == 1) {
                left_h = GAP * i;
                left_p = (u64)i;
                move = UP;
            } else {
                left_h = bnd_h[at];
                left_p = bnd_p[at];
                move = bnd_m[at];
            }
            const double boundary_h = left_h;
            const u64 boundary_p = left_p;
            const bool last_row = i == la;
            const double row_gap = last_row ? 0.0 : GAP;  // trailing gaps are free
            const double row_hp_gap = last_row ? 0.0 : HOMOPOLYMER_GAP;
            const u64 row_inc = last_row ? 0ULL : 1ULL;
#pragma unroll
            for (int t = 0; t < STRIP; t++) {
                const double up_h = h[t];
                const u64 up_p = p[t];
                const bool eq_a = b[t] == a;
                // Homopolymer gap: B[j-1] equals the "last match" of the move at (i, j-1).
                const bool hp = move == UP ? eq_a : (move == LEFT ? same_prev[t]
                                                                   : (eq_a && same_prev[t]));
                const double c1 = diag_h + sub_a[b[t]];
                const double c2 = left_h + (hp ? row_hp_gap : row_gap);
                const double c3 = last_col[t] ? up_h + 0.0
                                              : up_h + (hp ? HOMOPOLYMER_GAP : GAP);
                double nh;
                u64 np;
                if (c1 < c2 && c1 < c3) {
                    nh = c1; np = diag_step(diag_p, eq_a); move = DIAG;
                } else if (!(c1 < c2) && c2 < c3) {
                    nh = c2; np = gap_step(left_p, row_inc); move = LEFT;
                } else {
                    nh = c3; np = gap_step(up_p, last_col[t] ? 0ULL : 1ULL); move = UP;
                }
                diag_h = up_h;
                diag_p = up_p;
                h[t] = nh;
                p[t] = np;
                left_h = nh;
                left_p = np;
            }
            bnd_h[at] = h[STRIP - 1];
            bnd_p[at] = p[STRIP - 1];
            bnd_m[at] = (unsigned char)move;
            diag_h = boundary_h;
            diag_p = boundary_p;
        }
        if (j0 + STRIP > lb) {  // the strip holding column lb: pick it out of the registers
#pragma unroll
            for (int t = 0; t < STRIP; t++) {
                if (j0 + t == lb) {
                    result_h = h[t];
                    result_p = p[t];
                }
            }
        }
    }
    out_cost[k] = result_h;
    out_packed[k] = result_p;
}
