/* The persistent look-back scan, appended to scan.cl (its defines and lb_* helpers):
 * the same tiles, states and look-back as clg_scan_lookback, but a fixed number of work-groups
 * (a few per compute unit) each take tiles until none is left and hold two tiles in registers.
 * A work-group takes its next tile's ticket and issues that tile's loads before it scans, looks
 * back for and stores the current one, so every compute unit keeps loads in flight through
 * each look-back. A tile publishes its own sum as soon as its loads land (the next tile's right
 * before the current one looks back), so a tile waiting on a predecessor that is some group's
 * next tile does not wait for that group's current tile to finish.
 * Progress: a work-group looks back only at tickets below its own, each taken by a running
 * work-group that processes its tickets in order. Every group ends on one ticket >= tiles, then
 * counts itself done (lbp_done). */
#if CLG_LOOKBACK

/* The work-group's next ticket. */
static inline uint lbp_take(global uint *ticket, local uint *slot) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        *slot = atomic_inc(ticket);
    barrier(CLK_LOCAL_MEM_FENCE);
    return *slot;
}

/* A work-group's last step, after its stores: it counts itself done on the ticket. The last
 * work-group done (the counter's tiles + 2 groups - 1th increment: every group takes its exit
 * ticket before it counts itself done) resets the counter and posts to `mailbox` (a blocking
 * call's, NVIDIA; 0: none), sparing the blocking call a launch of clg_post. */
static inline void lbp_done(global uint *ticket, uint tiles, ulong mailbox, uint seq) {
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        CLG_DEVICE_FENCE();
        if (atomic_inc(ticket) == tiles + 2u * (uint)get_num_groups(0) - 1u) {
            atomic_xchg(ticket, 0u);
            clg_post_value(mailbox, seq, (T)0);
        }
    }
}

/* Publishes the own sum of tile `tile` (raw values in x; the inclusive sum for tile 0) and
 * returns it (in sub-group 0). */
static inline T lbp_publish(T4 *x, uint tile, volatile global ulong *state, uint epoch,
                            local T *sums) {
    uint lane = sg_get_local_id();
    uint sg = sg_get_group_linear_id();
    T own = 0;
    for (uint r = 0; r < CLG_LB_ROUNDS; r++)
        own += x[r].x + x[r].y + x[r].z + x[r].w;
    own = sg_reduce_add(own);
    if (lane == 0)
        sums[sg] = own;
    barrier(CLK_LOCAL_MEM_FENCE);
    T aggregate = 0;
    if (sg == 0) {
        aggregate = sg_reduce_add(lane < LB_NSG ? sums[lane] : (T)0);
        if (lane == 0)
            state[tile] = lb_word(epoch, tile == 0 ? LB_INCLUSIVE : LB_AGGREGATE, aggregate);
    }
    return aggregate;
}

/* The scan, look-back and stores of the loaded tile `tile` (its own sum *agg, published); the
 * next tile's (nx, next) own sum is published before the look-back and returned in *agg. */
static inline void lbp_finish(T4 *x, uint tile, global T *restrict out, ulong n,
                              volatile global ulong *state, uint epoch, int exclusive,
                              local T *parts, T4 *nx, uint next, uint tiles, local T *sums,
                              T *agg) {
    uint lane = sg_get_local_id();
    uint sg = sg_get_group_linear_id();
    T ex[CLG_LB_ROUNDS];
    lb_scan_rounds(x, ex, parts, lane, sg);
    barrier(CLK_LOCAL_MEM_FENCE);
    T aggregate = *agg;
    if (next < tiles)
        *agg = lbp_publish(nx, next, state, epoch, sums);
    if (sg == 0) {
        T mine[LB_PER];
        T own = lb_parts_take(parts, lane, mine);
        T before = sg_exclusive_scan_add(own);
        T prefix = 0;
        if (tile != 0)
            prefix = lb_look_back(state, tile, epoch, lane, aggregate);
        lb_parts_give(parts, lane, mine, prefix + before);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    lb_store(out, n, (size_t)tile * LB_TILE, x, ex, parts, exclusive);
}

/* The arguments of clg_scan_lookback, then the blocking call's post (lbp_done); `wait_ns` is
 * unused (tiles publish their own sums early, and polling at once measured fastest:
 * docs/scan.md). */
kernel __attribute__((reqd_work_group_size(CLG_LB_LOCAL, 1, 1))) void
clg_scan_persist(global const T *restrict in, global T *restrict out, ulong n,
                 global ulong *state_, global uint *ticket, uint tiles, uint epoch,
                 int exclusive, uint wait_ns, ulong mailbox, uint seq) {
    volatile global ulong *state = state_;
    local uint slot[1];
    local T parts[LB_PARTS];
    local T sums[LB_NSG];
    T4 a[CLG_LB_ROUNDS], b[CLG_LB_ROUNDS];
    T agg = 0;
    uint cur = lbp_take(ticket, slot);
    if (cur < tiles) {
        lb_load(in, n, cur, a);
        agg = lbp_publish(a, cur, state, epoch, sums);
    }
    /* Tickets are taken one tile ahead of their loads, no earlier: taking the one after next
     * while the current tile is scanned measured 0.02 slower on the H200, and keeping its loads
     * in flight through the look-back (a stash in local memory, commit 7d3de96) no faster
     * (docs/scan.md). */
    while (cur < tiles) {
        uint next = lbp_take(ticket, slot);
        if (next < tiles)
            lb_load(in, n, next, b);
        lbp_finish(a, cur, out, n, state, epoch, exclusive, parts, b, next, tiles, sums, &agg);
        for (uint r = 0; r < CLG_LB_ROUNDS; r++)
            a[r] = b[r];
        cur = next;
    }
    lbp_done(ticket, tiles, mailbox, seq);
}
#endif
