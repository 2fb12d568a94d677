/* clgroups device-wide scans (sum), appended to reduce.cl (same defines and helpers).
 *
 *   clg_chunk_reduce + clg_chunk_scan  any device: reduce-then-scan in three launches (chunk
 *                     sums; their exclusive scan in one work-group; each chunk from its offset)
 *   clg_scan_seq_sums + clg_scan_seq   CPUs: the same in two launches of one-work-item groups,
 *                     each scanning one contiguous run with 8-wide vectors (every group sums the
 *                     run sums before its own: no middle launch)
 *   clg_scan_lookback NVIDIA (CLG_LOOKBACK=1): one pass, decoupled look-back between tiles
 */

/* Scan pass 1: out[g] = reduction of chunk g, elements [g*chunk, min(n, (g+1)*chunk));
 * chunk is a multiple of 4. */
kernel void clg_chunk_reduce(global const T *in, global T *out, ulong n, ulong chunk,
                             local T *tmp) {
    size_t start = get_group_id(0) * chunk;
    size_t end = min((size_t)n, start + (size_t)chunk);
    size_t lid = get_local_id(0);
    size_t stride = get_local_size(0);
    size_t nv = end / 4;
    global const T4 *in4 = (global const T4 *)in;
    T4 a0 = (T4)(CLG_ID), a1 = a0, a2 = a0, a3 = a0;
    size_t i = start / 4 + lid;
    for (; i + 3 * stride < nv; i += 4 * stride) {
        a0 = COMB(a0, in4[i]);
        a1 = COMB(a1, in4[i + stride]);
        a2 = COMB(a2, in4[i + 2 * stride]);
        a3 = COMB(a3, in4[i + 3 * stride]);
    }
    for (; i < nv; i += stride)
        a0 = COMB(a0, in4[i]);
    T v = horizontal(COMB(COMB(a0, a1), COMB(a2, a3)));
    for (size_t t = nv * 4 + lid; t < end; t += stride)
        v = COMB(v, in[t]);
    v = group_reduce(v, tmp CLG_SG_SCRATCH);
    if (lid == 0)
        out[get_group_id(0)] = v;
}

/* Stores y at out[e..e + 4), the elements below `end` only (one T4 store when all four are). */
static inline void clg_store4(global T *out, size_t e, size_t end, T4 y) {
    if (e + 4 <= end) {
        *(global T4 *)(out + e) = y;
    } else {
        if (e < end)
            out[e] = y.x;
        if (e + 1 < end)
            out[e + 1] = y.y;
        if (e + 2 < end)
            out[e + 2] = y.z;
    }
}

/* Scan pass 2 and 3: work-group g scans chunk g (as above) in tiles of 4 elements per
 * work-item, starting from offsets[g] when has_offsets (else 0); exclusive != 0 gives the
 * exclusive scan. Per tile: a sequential scan of each work-item's 4 elements, an exclusive
 * sub-group scan of the work-item totals, a scan of the sub-group totals in local memory
 * (tmp: one slot per sub-group), and a running carry between tiles. */
kernel void clg_chunk_scan(global const T *in, global T *out, ulong n, ulong chunk,
                           global const T *offsets, int has_offsets, int exclusive,
                           local T *tmp) {
    size_t start = get_group_id(0) * chunk;
    size_t end = min((size_t)n, start + (size_t)chunk);
    uint lid = get_local_id(0);
    uint size = get_local_size(0);
    uint s = sg_get_max_local_range();
    uint nsg = (size + s - 1) / s;
    uint sg = sg_get_group_linear_id();
    T carry = has_offsets ? offsets[get_group_id(0)] : (T)0;
    for (size_t base = start; base < end; base += 4 * (size_t)size) {
        size_t e = base + 4 * (size_t)lid;
        T4 x;
        if (e + 4 <= end) {
            x = *(global const T4 *)(in + e);
        } else {
            x.x = e < end ? in[e] : (T)0;
            x.y = e + 1 < end ? in[e + 1] : (T)0;
            x.z = e + 2 < end ? in[e + 2] : (T)0;
            x.w = 0;
        }
        T q1 = x.x, q2 = q1 + x.y, q3 = q2 + x.z, total = q3 + x.w;
        T before = sg_exclusive_scan_add(total);
        if (sg_get_local_id() == sg_get_local_range() - 1)
            tmp[sg] = before + total;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint off = 1; off < nsg; off <<= 1) {
            T add = (lid < nsg && lid >= off) ? tmp[lid - off] : (T)0;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid < nsg)
                tmp[lid] += add;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        T pre = carry + (sg > 0 ? tmp[sg - 1] : (T)0) + before;
        T4 y = exclusive ? (T4)(pre, pre + q1, pre + q2, pre + q3)
                         : (T4)(pre + q1, pre + q2, pre + q3, pre + total);
        clg_store4(out, e, end, y);
        carry += tmp[nsg - 1];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* CPUs, pass 1: sums[g] = the sum of run g, elements [g*chunk, (g+1)*chunk) within n (chunk a
 * multiple of 8). One work-item per work-group. */
kernel void clg_scan_seq_sums(global const T *in, global T *sums, ulong n, ulong chunk) {
    uint g = get_group_id(0);
    size_t start = min((size_t)n, (size_t)g * (size_t)chunk);
    sums[g] = clg_run_reduce(in, start, min((size_t)n, start + (size_t)chunk));
}

/* CPUs, pass 2: run g scanned from the sum of runs 0..g-1, 8 elements at a time: an in-vector
 * scan in three shifted adds, plus the carry. */
kernel void clg_scan_seq(global const T *in, global T *out, ulong n, ulong chunk,
                         global const T *sums, int exclusive) {
    uint g = get_group_id(0);
    T carry = 0;
    for (uint k = 0; k < g; k++)
        carry += sums[k];
    size_t i = min((size_t)n, (size_t)g * (size_t)chunk);
    size_t end = min((size_t)n, i + (size_t)chunk);
    for (; i + 8 <= end; i += 8) {
        T8 y = vload8(0, in + i);
        y += (T8)((T)0, y.s012, y.s3456);
        y += (T8)((T2)0, y.s01, y.s2345);
        y += (T8)((T4)0, y.s0123);
        y += carry;
        vstore8(exclusive ? (T8)(carry, y.s012, y.s3456) : y, 0, out + i);
        carry = y.s7;
    }
    for (; i < end; i++) {
        T x = in[i];
        out[i] = exclusive ? carry : carry + x;
        carry += x;
    }
}

#if CLG_LOOKBACK
/* Single-pass scan with decoupled look-back (Merrill & Garland 2016), for 32-bit types on
 * NVIDIA (warps of 32, inline-PTX sub-groups). Work-groups of CLG_LB_LOCAL work-items take
 * tiles in the order they start (a ticket from an atomic counter), so a work-group only ever
 * waits for tiles of work-groups that are already running: NVIDIA keeps a resident work-group
 * running until it ends, which is the forward progress this needs.
 * Each tile is CLG_LB_ROUNDS rounds of 4 elements per work-item (coalesced T4 loads). A tile's
 * state is one 64-bit word, stored and loaded whole (volatile, so never a stale or torn read):
 * bits 0-31 the value, 32-33 the flag (1: the tile's own sum, 2: the sum of every element up
 * to the tile's end), 34-63 the launch's epoch (a word of an older launch reads as "not yet").
 * The last work-group to take a ticket resets the counter. A tile that has published its own
 * sum waits `wait_ns` ns (PTX nanosleep, sm_70+; 0: not at all) before it first reads the
 * states of the tiles before it (the host measures the best wait once per device). Then
 * sub-group 0 walks back and publishes the tile's inclusive sum (lb_look_back). */
#define LB_NSG (CLG_LB_LOCAL / 32)
#define LB_PARTS (CLG_LB_ROUNDS * LB_NSG)
#define LB_PER (LB_PARTS / 32)
#define LB_TILE (4 * CLG_LB_ROUNDS * CLG_LB_LOCAL)
#define LB_AGGREGATE 1u
#define LB_INCLUSIVE 2u
#define AS_T CLG_CAT(as_, CLG_T)
#ifndef CLG_LB_WIDTH
#define CLG_LB_WIDTH 1
#endif
#define LB_SPAN (32u * CLG_LB_WIDTH)

#if LB_PARTS % 32 != 0
#error "CLG_LB_ROUNDS * CLG_LB_LOCAL / 32 must be a multiple of 32"
#endif

static inline ulong lb_word(uint epoch, uint flag, T v) {
    return ((ulong)((epoch << 2) | flag) << 32) | (ulong)as_uint(v);
}

/* Loads tile `tile` (coalesced T4s, zeros past n). */
static inline void lb_load(global const T *restrict in, ulong n, uint tile, T4 *x) {
    size_t base = (size_t)tile * LB_TILE;
    uint lid = get_local_id(0);
    for (uint r = 0; r < CLG_LB_ROUNDS; r++) {
        size_t e = base + 4 * ((size_t)r * CLG_LB_LOCAL + lid);
        T4 v;
        if (e + 4 <= n) {
            v = *(global const T4 *)(in + e);
        } else {
            v.x = e < n ? in[e] : (T)0;
            v.y = e + 1 < n ? in[e + 1] : (T)0;
            v.z = e + 2 < n ? in[e + 2] : (T)0;
            v.w = 0;
        }
        x[r] = v;
    }
}

/* Scans each work-item's rounds of a loaded tile in place (x[r]: inclusive within its T4) and
 * gives ex[r], the exclusive scan of the T4 totals across the sub-group, with each (round,
 * sub-group) total in parts[r * LB_NSG + sg]. The rounds' sub-group scans go a step at a time
 * over every round: each step's shuffles are independent of one another and issue back to
 * back, instead of one round's chain of dependent shuffles after another's. The same adds in
 * the same order as sg_exclusive_scan_add. */
static inline void lb_scan_rounds(T4 *x, T *ex, local T *parts, uint lane, uint sg) {
    for (uint r = 0; r < CLG_LB_ROUNDS; r++) {
        T4 v = x[r];
        v.y += v.x;
        v.z += v.y;
        v.w += v.z;
        x[r] = v;
        ex[r] = v.w;
    }
    for (uint d = 1; d < 32; d <<= 1) {
        T o[CLG_LB_ROUNDS];
        for (uint r = 0; r < CLG_LB_ROUNDS; r++)
            o[r] = sg_shuffle_up(ex[r], d);
        for (uint r = 0; r < CLG_LB_ROUNDS; r++)
            ex[r] = lane >= d ? o[r] + ex[r] : ex[r];
    }
    if (lane == 31)
        for (uint r = 0; r < CLG_LB_ROUNDS; r++)
            parts[r * LB_NSG + sg] = ex[r];
    T o[CLG_LB_ROUNDS];
    for (uint r = 0; r < CLG_LB_ROUNDS; r++)
        o[r] = sg_shuffle_up(ex[r], 1u);
    for (uint r = 0; r < CLG_LB_ROUNDS; r++)
        ex[r] = lane == 0 ? (T)0 : o[r];
}

/* Stores the scanned tile at `base`: each T4 from its part's exclusive prefix (parts[], after
 * the look-back) plus its sub-group prefix ex[r]. */
static inline void lb_store(global T *restrict out, ulong n, size_t base, T4 *x, T *ex,
                            local T *parts, int exclusive) {
    uint lid = get_local_id(0);
    uint sg = sg_get_group_linear_id();
    for (uint r = 0; r < CLG_LB_ROUNDS; r++) {
        size_t e = base + 4 * ((size_t)r * CLG_LB_LOCAL + lid);
        T pre = parts[r * LB_NSG + sg] + ex[r];
        T4 v = x[r];
        T4 y = exclusive ? (T4)(pre, pre + v.x, pre + v.y, pre + v.z) : pre + v;
        clg_store4(out, e, n, y);
    }
}

/* The exclusive prefix of tile `tile` > 0 (called by every lane of one sub-group), which then
 * publishes its inclusive sum (prefix + aggregate): walks back from the tile before in steps of
 * LB_SPAN = 32 x CLG_LB_WIDTH predecessors (CLG_LB_WIDTH states per work-item, a build define, 1
 * unless set), reading a step's states until every one up to the nearest that holds an
 * inclusive sum has published (not the whole step: older states past that one are not needed),
 * adding them, and stopping there or walking on. */
static inline T lb_look_back(volatile global ulong *state, uint tile, uint epoch, uint lane,
                             T aggregate) {
    long j = (long)tile - 1;
    T prefix = 0;
    for (;;) {
        uint flag[CLG_LB_WIDTH];
        T val[CLG_LB_WIDTH];
        uint stop, gap;
        do {
            uint s = LB_SPAN, g = LB_SPAN;
            for (uint i = 0; i < CLG_LB_WIDTH; i++) {
                uint d = i * 32u + lane;
                long k = j - (long)d;
                flag[i] = LB_INCLUSIVE;
                val[i] = 0;
                if (k >= 0) {
                    ulong w = state[k];
                    uint hi = (uint)(w >> 32);
                    flag[i] = (hi >> 2) == epoch ? (hi & 3u) : 0u;
                    val[i] = AS_T((uint)w);
                }
                s = flag[i] == LB_INCLUSIVE ? min(s, d) : s;
                g = flag[i] == 0u ? min(g, d) : g;
            }
            stop = sg_reduce_min(s);
            gap = sg_reduce_min(g);
        } while (gap < stop);
        T part = 0;
        for (uint i = 0; i < CLG_LB_WIDTH; i++)
            part += i * 32u + lane <= stop ? val[i] : (T)0;
        prefix += sg_reduce_add(part);
        if (stop < LB_SPAN)
            break;
        j -= LB_SPAN;
    }
    if (lane == 0)
        state[tile] = lb_word(epoch, LB_INCLUSIVE, prefix + aggregate);
    return prefix;
}

/* Sub-group 0's share of a tile's LB_PARTS (round, sub-group) totals, in tile order: LB_PER per
 * lane into mine[]; returns their sum. */
static inline T lb_parts_take(local T *parts, uint lane, T *mine) {
    T own = 0;
    for (uint k = 0; k < LB_PER; k++) {
        mine[k] = parts[lane * LB_PER + k];
        own += mine[k];
    }
    return own;
}

/* Every part's exclusive prefix into parts[], from `run`, the lane's first. */
static inline void lb_parts_give(local T *parts, uint lane, T *mine, T run) {
    for (uint k = 0; k < LB_PER; k++) {
        parts[lane * LB_PER + k] = run;
        run += mine[k];
    }
}

kernel __attribute__((reqd_work_group_size(CLG_LB_LOCAL, 1, 1))) void
clg_scan_lookback(global const T *restrict in, global T *restrict out, ulong n,
                  global ulong *state_, global uint *ticket, uint tiles, uint epoch,
                  int exclusive, uint wait_ns) {
    volatile global ulong *state = state_;
    local uint tile_l;
    local T parts[LB_PARTS];
    uint lid = get_local_id(0);
    uint lane = sg_get_local_id();
    uint sg = sg_get_group_linear_id();
    if (lid == 0) {
        uint t = atomic_inc(ticket);
        if (t == tiles - 1)
            atomic_xchg(ticket, 0u);
        tile_l = t;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint tile = tile_l;
    size_t base = (size_t)tile * LB_TILE;

    /* Load, scan within each T4, then across the sub-group (one independent scan per round). */
    T4 x[CLG_LB_ROUNDS];
    T ex[CLG_LB_ROUNDS];
    lb_load(in, n, tile, x);
    lb_scan_rounds(x, ex, parts, lane, sg);
    barrier(CLK_LOCAL_MEM_FENCE);

    /* Sub-group 0: scan of the LB_PARTS (round, sub-group) totals, in tile order; the tile's
     * total; its state; the look-back; then every part's exclusive prefix into parts[]. */
    if (sg == 0) {
        T mine[LB_PER];
        T own = lb_parts_take(parts, lane, mine);
        T before = sg_exclusive_scan_add(own);
        T aggregate = sg_broadcast(before + own, 31);
        T prefix = 0;
        if (tile == 0) {
            if (lane == 0)
                state[0] = lb_word(epoch, LB_INCLUSIVE, aggregate);
        } else {
            if (lane == 0)
                state[tile] = lb_word(epoch, LB_AGGREGATE, aggregate);
#if defined(CLG_PTX_SM) && CLG_PTX_SM >= 70
            /* Give the tiles before this one time to publish their states before the first
             * poll: polls of unpublished states cost more than the pause (plan.rs). */
            if (wait_ns > 0u)
                asm volatile("nanosleep.u32 %0;" ::"r"(wait_ns));
#endif
            prefix = lb_look_back(state, tile, epoch, lane, aggregate);
        }
        lb_parts_give(parts, lane, mine, prefix + before);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    lb_store(out, n, base, x, ex, parts, exclusive);
}
#endif
