// Exact pruning's counting filter (docs/pruning.md): q-gram presence bitsets, one thread
// per sequence, and per pair the smaller count of either sequence's q-gram positions
// whose q-gram is in the other's bitset, one thread per pair; exactly what
// src/seqpairs/backends/cpu/qgrams.py computes.
//
// A block whose pairs all hold one of two sequences (a tile's rows: the distance stage's
// pairs come so) keeps those sequences' bitsets in shared memory. The other sequence's positions are
// looked up there; the shared sequence's positions in the other's bitset are counted as
// the other's first positions of each slot found there (the slots both hold) plus the
// shared sequence's repeated slots looked up in global memory, so that a pair reads one
// bitset from global memory only at repeats instead of at every position. There each
// sequence's positions come as entries (slot | FIRST where the position is its slot's
// first), four to a 16-byte load: a warp's threads read 32 sequences at once, and a byte
// a letter made that the kernel's bottleneck (two loads a position, each touching 32
// cache lines).
typedef unsigned long long u64;

#define GOLDEN 0x9E3779B97F4A7C15ull
#define SHARED_WORDS 2048  // 32-bit words: a whole 8-gram bitset (2^16 bits)
#define SLOT_MASK 0xFFFFu  // an entry's slot (bits <= 16: the bitsets that fit in shared memory)
#define FIRST 0x10000u     // an entry's flag: its slot's first position in its sequence

__device__ __forceinline__ u64 slot_of(u64 code, int q, int bits)
{
    return 2 * q <= bits ? code : (code * GOLDEN) >> (64 - bits);
}

// Each sequence's bitset and, where with_entries (bits <= 16), its positions' entries from
// entry_at[s] on (a multiple of 4, backends/gpu/qgrams.py).
extern "C" __global__ void qgram_bitsets(const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
              int n, int q, int bits, u64* __restrict__ sets, int with_entries,
              const long long* __restrict__ entry_at, unsigned* __restrict__ entries)
{
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= n) return;
    const size_t words = ((size_t)1 << bits) / 64 > 0 ? ((size_t)1 << bits) / 64 : 1;
    u64* set = sets + (size_t)s * words;
    const u64 mask = (1ull << (2 * q)) - 1;
    u64 code = 0;
    const long long start = offsets[s], stop = offsets[s + 1];
    unsigned* entry = with_entries ? entries + entry_at[s] : nullptr;
    for (long long k = start; k < stop; k++) {
        code = ((code << 2) | codes[k]) & mask;
        if (k - start >= q - 1) {
            const u64 slot = slot_of(code, q, bits), bit = 1ull << (slot & 63);
            const bool first = (set[slot >> 6] & bit) == 0;
            set[slot >> 6] |= bit;
            if (entry) *entry++ = (unsigned)slot | (first ? FIRST : 0u);
        }
    }
}

__device__ __forceinline__ int present(const unsigned char* __restrict__ codes, long long start,
                                       long long stop, int q, int bits,
                                       const u64* __restrict__ set)
{
    const u64 mask = (1ull << (2 * q)) - 1;
    u64 code = 0;
    int count = 0;
    for (long long k = start; k < stop; k++) {
        code = ((code << 2) | codes[k]) & mask;
        if (k - start >= q - 1) {
            const u64 slot = slot_of(code, q, bits);
            count += (int)((__ldg(set + (slot >> 6)) >> (slot & 63)) & 1ull);
        }
    }
    return count;
}

// An entry of the other sequence against the shared bitset.
__device__ __forceinline__ void tally(unsigned entry, const unsigned* __restrict__ common_set,
                                      int& in_common, int& both)
{
    const unsigned slot = entry & SLOT_MASK;
    const int hit = (common_set[slot >> 5] >> (slot & 31)) & 1u;
    in_common += hit;
    both += hit & (entry >> 16);
}

// A repeated entry of the shared sequence against the other's bitset.
__device__ __forceinline__ int repeat_hit(unsigned entry, const u64* __restrict__ other_set)
{
    if (entry & FIRST) return 0;
    const unsigned slot = entry & SLOT_MASK;
    return (int)((__ldg(other_set + (slot >> 6)) >> (slot & 63)) & 1ull);
}

// The counts of a pair whose sequence `common` has its bitset in shared memory (header).
__device__ __forceinline__ int with_shared_set(const long long* __restrict__ offsets,
                                               const long long* __restrict__ entry_at,
                                               const unsigned* __restrict__ entries,
                                               long long common, long long other, int q,
                                               const unsigned* __restrict__ common_set,
                                               const u64* __restrict__ other_set)
{
    int in_common = 0, both = 0, repeats = 0;
    const unsigned* from = entries + entry_at[other];
    const int positions = (int)(offsets[other + 1] - offsets[other]) - q + 1;
    int p = 0;
    for (; p + 4 <= positions; p += 4) {
        const uint4 e = __ldg((const uint4*)(from + p));
        tally(e.x, common_set, in_common, both);
        tally(e.y, common_set, in_common, both);
        tally(e.z, common_set, in_common, both);
        tally(e.w, common_set, in_common, both);
    }
    for (; p < positions; p++) tally(__ldg(from + p), common_set, in_common, both);
    // the same sequence in every thread of the block: one load for all, no divergence
    const unsigned* own = entries + entry_at[common];
    const int own_positions = (int)(offsets[common + 1] - offsets[common]) - q + 1;
    p = 0;
    for (; p + 4 <= own_positions; p += 4) {
        const uint4 e = __ldg((const uint4*)(own + p));
        repeats += repeat_hit(e.x, other_set) + repeat_hit(e.y, other_set)
                   + repeat_hit(e.z, other_set) + repeat_hit(e.w, other_set);
    }
    for (; p < own_positions; p++) repeats += repeat_hit(__ldg(own + p), other_set);
    return min(in_common, both + repeats);
}

extern "C" __global__ void qgram_shared(const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
             int with_entries, const long long* __restrict__ entry_at,
             const unsigned* __restrict__ entries, const long long* __restrict__ pa,
             const long long* __restrict__ pb, int n, int q, int bits,
             const u64* __restrict__ sets, int* __restrict__ out)
{
    __shared__ unsigned common_sets[2][SHARED_WORDS];
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    const bool valid = k < n;
    const size_t words = ((size_t)1 << bits) / 64 > 0 ? ((size_t)1 << bits) / 64 : 1;
    const long long s = valid ? pa[k] : 0, t = valid ? pb[k] : 0;
    // Every pair of the block holds one of two sequences, a side of its first pair and a
    // side of its last? A tile's rows (500 pairs at the default tile size) put a row's end
    // in about every other block (backends/gpu/qgrams.SHARED_BLOCK threads), whose pairs
    // hold the two rows' sequences (on either side: a pair is (larger index, smaller)).
    const long long head = blockIdx.x * (long long)blockDim.x;
    const long long tail = min(head + (long long)blockDim.x, (long long)n) - 1;
    long long c0 = 0, c1 = 0;
    int everywhere = 0;
    for (int side = 0; side < 4 && !everywhere; side++) {  // the same in every thread
        c0 = (side & 1) ? pb[head] : pa[head];
        c1 = (side & 2) ? pb[tail] : pa[tail];
        everywhere = __syncthreads_and(!valid || s == c0 || t == c0 || s == c1 || t == c1);
    }
    if (everywhere && with_entries) {
        for (int c = 0; c < (c0 == c1 ? 1 : 2); c++) {
            const unsigned* from = (const unsigned*)(sets + (size_t)(c ? c1 : c0) * words);
            for (int w = threadIdx.x; w < 2 * (int)words; w += blockDim.x)
                common_sets[c][w] = from[w];
        }
        __syncthreads();
        if (valid) {
            const bool holds_c0 = s == c0 || t == c0;
            const long long common = holds_c0 ? c0 : c1;
            const long long other = s == common ? t : s;
            out[k] = with_shared_set(offsets, entry_at, entries, common, other, q,
                                     common_sets[holds_c0 ? 0 : 1],
                                     sets + (size_t)other * words);
        }
        return;
    }
    if (!valid) return;
    const int in_b = present(codes, offsets[s], offsets[s + 1], q, bits, sets + (size_t)t * words);
    const int in_a = present(codes, offsets[t], offsets[t + 1], q, bits, sets + (size_t)s * words);
    out[k] = min(in_a, in_b);
}

// The hit of the q-gram position ending at letter k (a rolling code ending there).
__device__ __forceinline__ int hit_at(u64 code, int q, int bits, const u64* __restrict__ set)
{
    const u64 slot = slot_of(code, q, bits);
    return (int)((__ldg(set + (slot >> 6)) >> (slot & 63)) & 1ull);
}

// count - density x positions, rounded as the CPU's (no fused multiply-add)
__device__ __forceinline__ double excess(long long count, long long positions, double density)
{
    return __dsub_rn((double)count, __dmul_rn(density, (double)positions));
}

// The most, over runs of at least `least` consecutive q-gram positions of the sequence at
// start..stop, of (the run's positions whose q-gram is in `set`) - density x (its
// positions); -inf where it has fewer positions (backends/cpu/qgrams.py's _densest_side):
// the prefix counts at v and at u = v - least from two rolling codes.
__device__ double densest_side(const unsigned char* __restrict__ codes, long long start,
                               long long stop, int q, int bits, long long least,
                               double density, const u64* __restrict__ set)
{
    const long long positions = stop - start - q + 1;
    if (positions < least) return __longlong_as_double(0xfff0000000000000ll);  // -inf
    const u64 mask = (1ull << (2 * q)) - 1;
    u64 lead = 0, lag = 0;
    for (long long k = start; k < start + q - 1; k++) {
        lead = ((lead << 2) | codes[k]) & mask;
        lag = ((lag << 2) | codes[k]) & mask;
    }
    long long at_v = 0, at_u = 0;
    for (long long x = 0; x < least; x++) {
        lead = ((lead << 2) | codes[start + q - 1 + x]) & mask;
        at_v += hit_at(lead, q, bits, set);
    }
    double lowest = 0.0, best = excess(at_v, least, density);
    for (long long v = least + 1; v <= positions; v++) {
        lead = ((lead << 2) | codes[start + q - 2 + v]) & mask;
        at_v += hit_at(lead, q, bits, set);
        const long long u = v - least;
        lag = ((lag << 2) | codes[start + q - 2 + u]) & mask;
        at_u += hit_at(lag, q, bits, set);
        lowest = fmin(lowest, excess(at_u, u, density));
        best = fmax(best, __dsub_rn(excess(at_v, v, density), lowest));
    }
    return best;
}

// Per pair the least of its two sequences' densest_side against the other's bitset.
extern "C" __global__ void qgram_densest(const unsigned char* __restrict__ codes,
              const long long* __restrict__ offsets, const long long* __restrict__ pa,
              const long long* __restrict__ pb, const long long* __restrict__ least, int n,
              int q, int bits, double density, const u64* __restrict__ sets,
              double* __restrict__ out)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const size_t words = ((size_t)1 << bits) / 64 > 0 ? ((size_t)1 << bits) / 64 : 1;
    const long long s = pa[k], t = pb[k];
    out[k] = fmin(densest_side(codes, offsets[s], offsets[s + 1], q, bits, least[k], density,
                               sets + (size_t)t * words),
                  densest_side(codes, offsets[t], offsets[t + 1], q, bits, least[k], density,
                               sets + (size_t)s * words));
}
