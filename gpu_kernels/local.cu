// PSSE scores: Smith-Waterman-Gotoh local alignment (integer, affine gaps) of each query
// against its target and against shuffles of the target made on the device, exactly as
// src/seqpairs/scoring/local.py specifies, src/seqpairs/stats/shuffle.py shuffles and
// src/seqpairs/backends/cpu/local.py computes.
//
// Layout (inter-task, as in Zhang et al. 2012): all threads of a block work on one group of
// pairs sharing a target, one thread per shuffle: the thread shuffles the target once and
// aligns each of the group's queries against it in turn (Zhang's data reuse). With LANES = 2 a thread runs two of the pair's slots (slot 0 is
// the target itself, slot s + 1 its shuffle s) in the two 16-bit halves of each 32-bit
// word, with Hopper's DPX instructions; LANES = 1 runs one slot in 32 bits, for pairs whose
// scores could pass the 16-bit range (below). A lane's target runs down the rows, the query
// along the columns in strips of STRIP columns whose H and F stay in registers; the strip's
// right edge (H, E) goes to a buffer in global memory for the next strip (each block's rows
// contiguous, [block][row][thread], so a row of a block is one coalesced access). Every
// thread of a block has the same query and the same number of rows, so they move in step:
// the scores of a strip (the query profile slice) are built once per block in shared memory.
//
// Profiles: the scores of a query column come from the matrix row of its letter, or with
// PSSM = 1 from the query's position-specific scoring matrix. WORD_PROFILE = 1 keeps, for every combination of the lanes' target letters,
// the strip's ready score words (two int16 halves with LANES = 2), one shared load per four
// columns; WORD_PROFILE = 0 keeps one int8 score per letter and column and pairs the two
// lanes' bytes with one byte permute per column (for large alphabets: (K + 1)^2 words per
// column would not fit).
//
// Exactness: the recurrence is computed as specified (no clamping but H's at 0), every value
// v held as v + zero. With 16-bit lanes zero = B - 32768, B = max(open + 2 extend, 128):
// every value and intermediate lies in [-B, best] (H >= 0, E and F >= -(open + extend),
// a score >= -128), so it fits while best <= 65535 - B, which the host makes sure of from
// min(m, n) x the largest score. With 32 bits zero = 0. Query columns past m and target rows
// past n (padding to whole strips and to the pad letter code K) score PAD_SCORE against
// everything: they cannot raise the best score, nor reach a real cell.
#ifndef STRIP
#define STRIP 32
#endif
#ifndef LANES
#define LANES 2
#endif
#ifndef WORD_PROFILE
#define WORD_PROFILE 1
#endif
#ifndef BLOCK
#define BLOCK 128
#endif
#ifndef PSSM
#define PSSM 0
#endif

#if STRIP % (WORD_PROFILE ? 4 : 16) != 0 || STRIP % 2 != 0
#error "STRIP must be a multiple of 4 (word profile) or 16 (byte profile)"
#endif
#if LANES == 1 && !WORD_PROFILE
#error "LANES = 1 needs the word profile"
#endif

typedef unsigned int u32;
typedef unsigned long long u64;

#define PAD_SCORE (-128)
// Row strides of the shared profile, in 16-byte units, odd: eight consecutive letters
// (combinations) start in eight different 16-byte bank groups.
#define WORD_STRIDE ((STRIP / 4) | 1)
#define BYTE_STRIDE ((STRIP / 16) | 1)

// --- Philox4x32-10, bounded integers, Fisher-Yates: seqpairs.shuffle, bit for bit ---

__device__ __forceinline__ uint4 philox4x32_10(uint4 c, uint2 k)
{
#pragma unroll
    for (int r = 0; r < 10; r++) {
        if (r) {
            k.x += 0x9E3779B9u;
            k.y += 0xBB67AE85u;
        }
        const u32 hi0 = __umulhi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
        const u32 hi1 = __umulhi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
        c = make_uint4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    }
    return c;
}

struct Stream {  // the words of one (seed, pair, shuffle), in order
    uint2 key;
    uint4 counter;  // (block, shuffle, pair low, pair high)
    uint4 words;    // words not used yet, next one first
    int left;       // how many of them

    __device__ __forceinline__ u32 next()
    {
        if (left == 0) {
            words = philox4x32_10(counter, key);
            counter.x++;
            left = 4;
        }
        const u32 w = words.x;
        words = make_uint4(words.y, words.z, words.w, 0u);
        left--;
        return w;
    }

    // Uniform in [0, s), 1 <= s < 2^32: Lemire's multiply-shift with rejection.
    __device__ __forceinline__ u32 bounded(u32 s)
    {
        u64 m = (u64)next() * s;
        if ((u32)m < s) {
            const u32 threshold = (0u - s) % s;  // (2^32 - s) mod s
            while ((u32)m < threshold) m = (u64)next() * s;
        }
        return (u32)(m >> 32);
    }
};

// --- lane arithmetic: V holds LANES signed lanes ---

// Per lane: a + b, max(a, b, c) and max(a + b, c), all signed.
#if LANES == 2
typedef u32 V;
__device__ __forceinline__ V splat(int x) { return ((u32)x & 0xFFFFu) * 0x10001u; }
__device__ __forceinline__ V add(V a, V b) { return __vadd2(a, b); }
__device__ __forceinline__ V max3(V a, V b, V c) { return __vimax3_s16x2(a, b, c); }
__device__ __forceinline__ V addmax(V a, V b, V c) { return __viaddmax_s16x2(a, b, c); }
__device__ __forceinline__ int lane_value(V v, int lane) { return (short)(v >> (16 * lane)); }
#else
typedef int V;
__device__ __forceinline__ V splat(int x) { return x; }
__device__ __forceinline__ V add(V a, V b) { return a + b; }
__device__ __forceinline__ V max3(V a, V b, V c) { return __vimax3_s32(a, b, c); }
__device__ __forceinline__ V addmax(V a, V b, V c) { return __viaddmax_s32(a, b, c); }
__device__ __forceinline__ int lane_value(V v, int) { return v; }
#endif

// Selector for prmt: result = sign-extended byte k of a | sign-extended byte k of b << 16
// (a selector nibble's bit 3 replicates the chosen byte's sign; PTX prmt, since
// __byte_perm ignores that bit).
#define PAIR_SELECTOR(k) ((k) | (((k) | 8) << 4) | ((4 + (k)) << 8) | (((4 + (k)) | 8) << 12))

__device__ __forceinline__ u32 pair_bytes(u32 a, u32 b, u32 selector)
{
    u32 r;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(selector));
    return r;
}

// Score of query column j against target letter code b (K: padding): the matrix's entry
// of the query's letter, or with PSSM = 1 the query's position-specific row j.
__device__ __forceinline__ int score(const unsigned char* Q, const int* P, int m,
                                     const int* subst, int letters, int j, int b)
{
    if (j >= m || b >= letters) return PAD_SCORE;
#if PSSM
    return P[j * letters + b];
#else
    return subst[Q[j] * letters + b];
#endif
}

// The shared profile of the strip starting at query column j0.
__device__ __forceinline__ void build_profile(uint4* s_prof, const unsigned char* Q,
                                              const int* P, int m, int j0, const int* subst,
                                              int letters)
{
    const int codes = letters + 1;  // with the pad code
#if WORD_PROFILE
    u32* words = (u32*)s_prof;
    const int combinations = LANES == 2 ? codes * codes : codes;
    for (int idx = threadIdx.x; idx < combinations * STRIP; idx += BLOCK) {
        const int c = idx / STRIP, t = idx % STRIP;
#if LANES == 2
        const int b0 = c / codes, b1 = c % codes;
        const u32 w = ((u32)score(Q, P, m, subst, letters, j0 + t, b0) & 0xFFFFu)
                      | ((u32)score(Q, P, m, subst, letters, j0 + t, b1) << 16);
#else
        const u32 w = (u32)score(Q, P, m, subst, letters, j0 + t, c);
#endif
        words[c * (4 * WORD_STRIDE) + t] = w;
    }
#else
    signed char* bytes = (signed char*)s_prof;
    for (int idx = threadIdx.x; idx < codes * STRIP; idx += BLOCK) {
        const int c = idx / STRIP, t = idx % STRIP;
        bytes[c * (16 * BYTE_STRIDE) + t] = (signed char)score(Q, P, m, subst, letters, j0 + t, c);
    }
#endif
}

// The STRIP score words of a row whose lanes have target letters `row_letters`.
__device__ __forceinline__ void row_scores(const uint4* s_prof, u32 row_letters, int codes,
                                           V (&s)[STRIP])
{
#if WORD_PROFILE
#if LANES == 2
    const int c = (int)(row_letters & 0xFFu) * codes + (int)(row_letters >> 8);
#else
    const int c = (int)row_letters;
#endif
    const uint4* p = s_prof + c * WORD_STRIDE;
#pragma unroll
    for (int v = 0; v < STRIP / 4; v++) {
        const uint4 x = p[v];
        s[4 * v] = (V)x.x;
        s[4 * v + 1] = (V)x.y;
        s[4 * v + 2] = (V)x.z;
        s[4 * v + 3] = (V)x.w;
    }
#else
    const uint4* p0 = s_prof + (int)(row_letters & 0xFFu) * BYTE_STRIDE;
    const uint4* p1 = s_prof + (int)(row_letters >> 8) * BYTE_STRIDE;
#pragma unroll
    for (int v = 0; v < STRIP / 16; v++) {
        const uint4 x0 = p0[v], x1 = p1[v];
        const u32 w0[4] = {x0.x, x0.y, x0.z, x0.w}, w1[4] = {x1.x, x1.y, x1.z, x1.w};
#pragma unroll
        for (int w = 0; w < 4; w++) {
#pragma unroll
            for (int k = 0; k < 4; k++) s[16 * v + 4 * w + k] = pair_bytes(w0[w], w1[w], PAIR_SELECTOR(k));
        }
    }
#endif
}

#if LANES == 2
typedef unsigned short Letters;  // the lanes' letters of one row, lane 0 in the low byte
#else
typedef unsigned char Letters;
#endif

struct Row {  // what a strip carries from a row to the next, besides H and F
    V diag_left;            // H(i - 1, j0 - 1)
    Letters next_letters;   // prefetched for the next row
    uint2 next_edge;        // (H(i, j0 - 1), E(i, j0)) of the next row, prefetched
};

// Row i of the strip (its letters and edge at letters_at, edge_at, which move to row i + 1):
// H of row i - 1 in `up`, row i's into `h`; F(i, j) in f becomes F(i + 1, j).
__device__ __forceinline__ void strip_row(const uint4* s_prof, int codes,
                                          const Letters*& letters_at, uint2*& edge_at,
                                          bool first, bool last, V zero,
                                          V neg_open, V neg_extend, const V (&up)[STRIP],
                                          V (&h)[STRIP], V (&f)[STRIP], Row& row, V& best)
{
    const Letters row_letters = row.next_letters;
    const uint2 left = row.next_edge;
    const Letters* next_letters = letters_at + BLOCK;
    uint2* next_edge = edge_at + BLOCK;
    row.next_letters = *next_letters;
    if (!first) row.next_edge = *next_edge;
    V s[STRIP];
    row_scores(s_prof, row_letters, codes, s);
    V e = (V)left.y;  // E(i, j)
#pragma unroll
    for (int t = 0; t < STRIP; t++) {
        const V d = addmax(t ? up[t - 1] : row.diag_left, s[t], f[t]);  // max(diag + s, F)
        h[t] = max3(d, e, zero);
        const V h_open = add(h[t], neg_open);
        e = addmax(e, neg_extend, h_open);        // E(i, j + 1)
        f[t] = addmax(f[t], neg_extend, h_open);  // F(i + 1, j)
        if (t & 1) best = max3(best, h[t - 1], h[t]);
    }
    row.diag_left = (V)left.x;
    if (!last) *edge_at = make_uint2((u32)h[STRIP - 1], (u32)e);
    letters_at = next_letters;
    edge_at = next_edge;
}

extern "C" __global__ void psse_local(
    const unsigned char* __restrict__ q_codes, const long long* __restrict__ q_offsets,
    const unsigned char* __restrict__ t_codes, const long long* __restrict__ t_offsets,
    const long long* __restrict__ pair_query,   // query of each pair
    const long long* __restrict__ pair_target,  // target of each pair
    const long long* __restrict__ order,    // pairs, grouped: group g is order[bounds[g]:
    const long long* __restrict__ bounds,   // bounds[g + 1]], pairs with one target
    const long long* __restrict__ batch,    // the group of each blockIdx.y
    const long long* __restrict__ keys,     // RNG key of each target
    const int slots,                        // shuffles + 1
    const int* __restrict__ subst,          // letters x letters, [query letter][target letter]
    const int* __restrict__ pssm,           // PSSM = 1: [query column][target letter], rows
                                            // as q_codes' letters
    const int letters, const int gap_open, const int gap_extend, const u64 seed,
    const int zero,                         // how a lane holds the value 0
    const int scratch_rows,                 // rows per thread in scratch and edge
    Letters* __restrict__ scratch,          // [block][row][thread]: the lanes' target letters
    uint2* __restrict__ edge,               // [block][row][thread]: (H, E) at a strip's right edge
    int* __restrict__ out)                  // [pair][slot]
{
    extern __shared__ uint4 s_prof[];
    const long long group = batch[blockIdx.y];
    const long long first_pair = bounds[group], stop_pair = bounds[group + 1];
    const long long target = pair_target[order[first_pair]];
    const unsigned char* T = t_codes + t_offsets[target];
    const int n = (int)(t_offsets[target + 1] - t_offsets[target]);
    // this thread's row 0 in scratch and edge; row i is BLOCK entries further
    const size_t thread = ((size_t)blockIdx.y * gridDim.x + blockIdx.x) * scratch_rows * BLOCK
                          + threadIdx.x;
    const int slot0 = (blockIdx.x * BLOCK + threadIdx.x) * LANES;

    // Each lane's target: copied (pad code up to an even number of rows: rows go in twos),
    // then shuffled in place, once for all the group's queries. The scratch has one more
    // row, which the prefetches below read but never use.
    const int padded_rows = (n + 1) & ~1;  // the same in the whole block
    // Threads past the last slot only help build the profiles.
    const int rows = slot0 < slots ? padded_rows : 0;
    for (int i = 0; i < rows; i++)
        scratch[thread + i * BLOCK] = (Letters)((i < n ? T[i] : letters) * (LANES == 2 ? 0x101 : 1));
    unsigned char* lane_letters = (unsigned char*)(scratch + thread);
    for (int lane = 0; lane < LANES; lane++) {
        const int slot = slot0 + lane;
        if (slot == 0 || slot >= slots) continue;  // the target itself, or an idle lane
        const u64 key = (u64)keys[target];
        Stream rng = {make_uint2((u32)seed, (u32)(seed >> 32)),
                      make_uint4(0u, (u32)(slot - 1), (u32)key, (u32)(key >> 32)),
                      make_uint4(0u, 0u, 0u, 0u), 0};
        unsigned char* a = lane_letters + lane;
        for (int i = n - 1; i > 0; i--) {
            const u32 j = rng.bounded((u32)i + 1u);
            const unsigned char x = a[i * (BLOCK * LANES)], y = a[j * (BLOCK * LANES)];
            a[i * (BLOCK * LANES)] = y;
            a[j * (BLOCK * LANES)] = x;
        }
    }

    const V neg_open = splat(-(gap_open + gap_extend)), neg_extend = splat(-gap_extend);
    const V z = splat(zero), z_open = splat(zero - gap_open - gap_extend);
    const int codes = letters + 1;
    for (long long r = first_pair; r < stop_pair; r++) {
        const long long pair = order[r], query = pair_query[pair];
        const unsigned char* Q = q_codes + q_offsets[query];
        const int* P = pssm + q_offsets[query] * letters;  // read only with PSSM = 1
        const int m = (int)(q_offsets[query + 1] - q_offsets[query]);
        V best = z;
        for (int j0 = 0; j0 < m; j0 += STRIP) {
            const bool first = j0 == 0, last = j0 + STRIP >= m;
            __syncthreads();  // everyone is done with the previous strip's profile
            build_profile(s_prof, Q, P, m, j0, subst, letters);
            __syncthreads();
            // H of the rows alternates between ha and hb, so that no cell copies the H above it
            V ha[STRIP], hb[STRIP], f[STRIP];
#pragma unroll
            for (int t = 0; t < STRIP; t++) {  // row 0: H = 0, F(1, j) = -(open + extend)
                ha[t] = z;
                f[t] = z_open;
            }
            const Letters* letters_at = scratch + thread;
            uint2* edge_at = edge + thread;
            // column 0: H = 0, E(i, 1) = -(open + extend)
            Row row = {z, *letters_at, first ? make_uint2((u32)z, (u32)z_open) : *edge_at};
            for (int i = 0; i < rows; i += 2) {
                strip_row(s_prof, codes, letters_at, edge_at, first, last, z, neg_open,
                          neg_extend, ha, hb, f, row, best);
                strip_row(s_prof, codes, letters_at, edge_at, first, last, z, neg_open,
                          neg_extend, hb, ha, f, row, best);
            }
        }
        for (int lane = 0; lane < LANES; lane++) {
            const int slot = slot0 + lane;
            if (slot < slots)
                out[pair * slots + slot] = lane_value(best, lane) - zero;
        }
    }
}
