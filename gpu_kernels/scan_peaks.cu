// seqpairs scan's peaks (src/seqpairs/pairs/scan.py) from scan_rows' row keys, on the GPU:
// row c of a block is a peak when its score reaches min_score, is above every score of
// rows c - half .. c - 1 and at least every score of rows c + 1 .. c + half (the window
// clipped to the target's rows 1 .. n): the first row holding its window's maximum.
//
// Window maxima as van Herk and Gil-Werman: each block's rows are cut into segments of
// `width` = max(half, 1) rows from its first row, and scan_segments keeps the running
// maximum of the scores from each segment's start (prefix) and to its end (suffix). A run
// of rows a .. b that lies in two segments has the maximum max(suffix[a], prefix[b]);
// inside one segment it starts at the segment's start (prefix[b]) or ends at its end
// (suffix[a]): a window of `half` rows spans two segments or exactly one, and a clipped
// window starts at the block's first row (the target's row 1) or ends at its last (n),
// since every reported row's window lies inside its block (pairs/scan.py).
#ifndef KEY32
#define KEY32 1
#endif
#if KEY32
typedef unsigned int Key;
typedef int Score;
#define NO_SCORE (-1)  // below every score
#else
typedef long long Key;
typedef long long Score;
#define NO_SCORE (-1LL)
#endif
#define COLUMN_BITS 15  // backends/common.py

__device__ __forceinline__ Score score_of(Key key) { return (Score)(key >> COLUMN_BITS); }

// The block holding item x of a list cut at `starts` (ascending, starts[0] = 0).
__device__ __forceinline__ int block_of(const long long* starts, int blocks, long long x)
{
    int lo = 0, hi = blocks - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (starts[mid] <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

// A thread a segment (segment g of all blocks' segments, block k's from first_segment[k]).
extern "C" __global__ void scan_segments(
    const Key* __restrict__ keys, const long long* __restrict__ base,  // block k's rows
    const long long* __restrict__ width, const long long* __restrict__ first_segment,
    const int blocks, const long long segments, Score* __restrict__ prefix,
    Score* __restrict__ suffix)
{
    const long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (g >= segments) return;
    const int k = block_of(first_segment, blocks, g);
    const long long first = base[k] + (g - first_segment[k]) * width[k];
    const long long end = min(first + width[k], base[k + 1]);
    Score best = NO_SCORE;
    for (long long r = first; r < end; r++) {
        best = max(best, score_of(keys[r]));
        prefix[r] = best;
    }
    best = NO_SCORE;
    for (long long r = end - 1; r >= first; r--) {
        best = max(best, score_of(keys[r]));
        suffix[r] = best;
    }
}

// The maximum score of rows a .. b (indices into keys, a <= b) of a block starting at `start`.
__device__ __forceinline__ Score run_max(const Score* prefix, const Score* suffix,
                                         long long start, long long w, long long a, long long b)
{
    if ((a - start) / w != (b - start) / w) return max(suffix[a], prefix[b]);
    return (a - start) % w == 0 ? prefix[b] : suffix[a];
}

// A thread a row: peak[r] = 1 where row r is a reported peak of its block, else 0.
extern "C" __global__ void scan_peaks(
    const Key* __restrict__ keys, const long long* __restrict__ base,
    const long long* __restrict__ lo, const long long* __restrict__ report_lo,
    const long long* __restrict__ report_hi, const long long* __restrict__ n,
    const long long* __restrict__ half, const int blocks, const long long rows,
    const Score* __restrict__ prefix, const Score* __restrict__ suffix,
    const long long min_score, unsigned char* __restrict__ peak)
{
    const long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const int k = block_of(base, blocks, r);
    const long long c = lo[k] + 1 + (r - base[k]);  // the row in the target
    const Score score = score_of(keys[r]);
    const long long h = half[k], w = max(h, 1LL);
    bool is_peak = c >= report_lo[k] && c <= min(report_hi[k], n[k]) && score >= min_score;
    if (is_peak && h > 0 && c > 1)  // rows max(c - h, 1) .. c - 1
        is_peak = run_max(prefix, suffix, base[k], w, r - (c - max(c - h, 1LL)), r - 1) < score;
    if (is_peak && h > 0 && c < n[k])  // rows c + 1 .. min(c + h, n)
        is_peak = run_max(prefix, suffix, base[k], w, r + 1, r + (min(c + h, n[k]) - c)) <= score;
    peak[r] = is_peak;
}
