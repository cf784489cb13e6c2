// SPDX-License-Identifier: GPL-2.0 OR MIT
//
// Where a block request's time goes, per whole disk and direction, from the kernel's block
// tracepoints (BTF-enabled: `tp_btf`, so handlers get the `struct request *` and key their
// start maps by it, as bcc's biolatency does):
//
//   pre_queue  block_bio_queue (the request's first bio)  -> block_rq_insert, or
//                                                          -> block_rq_issue when not inserted
//   queue      block_rq_insert -> block_rq_issue           (0 when issued directly)
//   device     block_rq_issue  -> block_rq_complete        (btt's D2C)
//
// Histograms use the buckets of iogauge_model::layers::bucket_of (16 per power of two); the
// loader reads the maps once per interval. The kernel structs below are the few fields used,
// relocated against the running kernel's BTF (CO-RE), so no kernel headers are needed.

typedef unsigned char __u8;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef __u64 sector_t;

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int(*name)[val]
#define __type(name, val) typeof(val) *name
#define CORE __attribute__((preserve_access_index))

// enum bpf_map_type
#define BPF_MAP_TYPE_HASH 1
#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_LRU_HASH 9
#define BPF_ANY 0

// Helpers by their number in include/uapi/linux/bpf.h.
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value,
                                   __u64 flags) = (void *)2;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)3;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;

struct gendisk {
	int major;
	int first_minor;
} CORE;

struct request_queue {
	struct gendisk *disk;
} CORE;

struct block_device {
	struct gendisk *bd_disk;
} CORE;

struct bvec_iter {
	sector_t bi_sector;
	unsigned int bi_size;
} CORE;

struct bio {
	struct block_device *bi_bdev;
	unsigned int bi_opf;
	struct bvec_iter bi_iter;
} CORE;

struct request {
	struct request_queue *q;
	unsigned int cmd_flags;
	__u64 start_time_ns;
	sector_t __sector;
} CORE;

#define REQ_OP_MASK 0xff // (1 << REQ_OP_BITS) - 1
#define REQ_OP_READ 0
#define REQ_OP_WRITE 1

#define MAX_DISKS 64
#define SUB_BUCKETS 16
#define BUCKETS 1024

enum stage { PRE_QUEUE, QUEUE, DEVICE, STAGES };

// One direction of one disk; the loader reads it as `Counters` in src/maps.rs.
struct counters {
	__u64 requests;
	__u64 bytes;
	__u64 merges;
	__u64 splits;
	__u64 requeues;
	__u64 count[STAGES];
	__u64 sum_ns[STAGES];
};

struct hist {
	__u64 buckets[BUCKETS];
};

struct bio_key {
	__u32 dev;
	__u32 pad;
	__u64 sector;
};

// The disks to trace: dev_t (major << 20 | minor, the kernel's MKDEV) -> slot.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_DISKS);
	__type(key, __u32);
	__type(value, __u32);
} disks SEC(".maps");

// slot * 2 + direction.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_DISKS * 2);
	__type(key, __u32);
	__type(value, struct counters);
} counters SEC(".maps");

// (slot * 2 + direction) * STAGES + stage.
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_DISKS * 2 * STAGES);
	__type(key, __u32);
	__type(value, struct hist);
} hists SEC(".maps");

// When a bio was queued, by (disk, first sector): a request's first bio keeps its sector, and
// a split's remainder is given its parent's time (block_split).
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct bio_key);
	__type(value, __u64);
} queued SEC(".maps");

// When a request was inserted, and when issued, by its address. Plain hashes, not LRU ones
// (an LRU map may evict a live entry before it is full, losing a request's stage): a queue's
// requests are preallocated, so the addresses are a bounded set whose entries are reused.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} inserted SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, __u64);
} issued SEC(".maps");

// floor(log2(v)) for v > 0 by halving steps (BPF has no count-leading-zeros instruction).
static __attribute__((always_inline)) __u32 log2_of(__u64 v)
{
	__u32 k = 0;
	if (v >> 32) { v >>= 32; k += 32; }
	if (v >> 16) { v >>= 16; k += 16; }
	if (v >> 8) { v >>= 8; k += 8; }
	if (v >> 4) { v >>= 4; k += 4; }
	if (v >> 2) { v >>= 2; k += 2; }
	if (v >> 1) { k += 1; }
	return k;
}

// iogauge_model::layers::bucket_of, without a loop.
static __attribute__((always_inline)) __u32 bucket_of(__u64 ns)
{
	if (ns < SUB_BUCKETS)
		return ns;
	__u32 k = log2_of(ns); // 2^k <= ns
	__u32 shift = k - 4;                // log2(SUB_BUCKETS)
	__u32 sub = (__u32)(ns >> shift) - SUB_BUCKETS;
	__u32 b = (k - 4 + 1) * SUB_BUCKETS + sub;
	return b < BUCKETS ? b : BUCKETS - 1;
}

static __attribute__((always_inline)) __u32 dev_of(struct gendisk *disk)
{
	if (!disk)
		return 0;
	return ((__u32)disk->major << 20) | (__u32)disk->first_minor;
}

// The counters' index of a request or bio on a traced disk, or -1.
static __attribute__((always_inline)) int index_of(__u32 dev, unsigned int opf)
{
	unsigned int op = opf & REQ_OP_MASK;
	if (op != REQ_OP_READ && op != REQ_OP_WRITE)
		return -1;
	__u32 *slot = bpf_map_lookup_elem(&disks, &dev);
	if (!slot)
		return -1;
	return (int)(*slot * 2 + op);
}

static __attribute__((always_inline)) void record(int idx, enum stage s, __u64 ns)
{
	__u32 i = idx;
	struct counters *c = bpf_map_lookup_elem(&counters, &i);
	__u32 h = i * STAGES + s;
	struct hist *hist = bpf_map_lookup_elem(&hists, &h);
	if (!c || !hist)
		return;
	__sync_fetch_and_add(&c->count[s], 1);
	__sync_fetch_and_add(&c->sum_ns[s], ns);
	__u64 b = bucket_of(ns);
	// bucket_of is below BUCKETS already; the mask, which the compiler cannot drop behind
	// the barrier, proves it to the verifier.
	asm volatile("%0 &= 1023" : "+r"(b));
	__sync_fetch_and_add(&hist->buckets[b], 1);
}

static __attribute__((always_inline)) int rq_index(struct request *rq)
{
	return index_of(dev_of(rq->q->disk), rq->cmd_flags);
}

static __attribute__((always_inline)) struct counters *counters_of(int idx)
{
	__u32 i = idx;
	return bpf_map_lookup_elem(&counters, &i);
}

// The pre-queue stage of `rq`, ending `now`: from its first bio's queueing.
static __attribute__((always_inline)) void pre_queue(struct request *rq, int idx, __u64 now)
{
	struct bio_key k = {.dev = dev_of(rq->q->disk), .sector = rq->__sector};
	__u64 *t = bpf_map_lookup_elem(&queued, &k);
	if (!t)
		return;
	if (now >= *t)
		record(idx, PRE_QUEUE, now - *t);
	bpf_map_delete_elem(&queued, &k);
}

SEC("tp_btf/block_bio_queue")
int on_bio_queue(__u64 *ctx)
{
	struct bio *bio = (struct bio *)ctx[0];
	__u32 dev = dev_of(bio->bi_bdev->bd_disk);
	if (index_of(dev, bio->bi_opf) < 0)
		return 0;
	struct bio_key k = {.dev = dev, .sector = bio->bi_iter.bi_sector};
	__u64 now = bpf_ktime_get_ns();
	bpf_map_update_elem(&queued, &k, &now, BPF_ANY);
	return 0;
}

// A split's first part keeps the bio's sector (and its queued time); the remainder, which is
// submitted again without a second block_bio_queue, starts at `new_sector` with the same time.
SEC("tp_btf/block_split")
int on_split(__u64 *ctx)
{
	struct bio *bio = (struct bio *)ctx[0];
	__u32 dev = dev_of(bio->bi_bdev->bd_disk);
	int idx = index_of(dev, bio->bi_opf);
	if (idx < 0)
		return 0;
	struct counters *c = counters_of(idx);
	if (c)
		__sync_fetch_and_add(&c->splits, 1);
	struct bio_key k = {.dev = dev, .sector = bio->bi_iter.bi_sector};
	__u64 *t = bpf_map_lookup_elem(&queued, &k);
	if (t) {
		__u64 at = *t;
		struct bio_key rest = {.dev = dev, .sector = (__u32)ctx[1]};
		bpf_map_update_elem(&queued, &rest, &at, BPF_ANY);
	}
	return 0;
}

// A bio merged into a request already made: counted, and its queued time dropped (the
// request's time runs from its first bio).
static __attribute__((always_inline)) int merged(struct bio *bio)
{
	__u32 dev = dev_of(bio->bi_bdev->bd_disk);
	int idx = index_of(dev, bio->bi_opf);
	if (idx < 0)
		return 0;
	struct counters *c = counters_of(idx);
	if (c)
		__sync_fetch_and_add(&c->merges, 1);
	struct bio_key k = {.dev = dev, .sector = bio->bi_iter.bi_sector};
	bpf_map_delete_elem(&queued, &k);
	return 0;
}

SEC("tp_btf/block_bio_backmerge")
int on_backmerge(__u64 *ctx)
{
	return merged((struct bio *)ctx[0]);
}

SEC("tp_btf/block_bio_frontmerge")
int on_frontmerge(__u64 *ctx)
{
	return merged((struct bio *)ctx[0]);
}

SEC("tp_btf/block_rq_insert")
int on_insert(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	int idx = rq_index(rq);
	if (idx < 0)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	pre_queue(rq, idx, now);
	__u64 key = (__u64)rq;
	bpf_map_update_elem(&inserted, &key, &now, BPF_ANY);
	return 0;
}

SEC("tp_btf/block_rq_issue")
int on_issue(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	int idx = rq_index(rq);
	if (idx < 0)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u64 key = (__u64)rq;
	// A start time older than the request's allocation belongs to an earlier life of the
	// same request struct (one merged into another after its insert, say): dropped.
	__u64 born = rq->start_time_ns;
	__u64 *again = bpf_map_lookup_elem(&issued, &key);
	if (again && *again < born) {
		bpf_map_delete_elem(&issued, &key);
		again = 0;
	}
	if (again) {
		// Issued again before it completed (the driver was busy and the request was
		// dispatched once more, seen on virtio-blk without a block_rq_requeue): its device
		// time runs from this issue; its stages before were counted at the first.
		*again = now;
		return 0;
	}
	__u64 *ins = bpf_map_lookup_elem(&inserted, &key);
	if (ins && *ins < born) {
		bpf_map_delete_elem(&inserted, &key);
		ins = 0;
	}
	if (ins) {
		if (now >= *ins)
			record(idx, QUEUE, now - *ins);
		bpf_map_delete_elem(&inserted, &key);
	} else {
		// Issued without being inserted (no scheduler, or a direct issue): its pre-queue
		// stage ends here and it spent no time in the queue.
		pre_queue(rq, idx, now);
		record(idx, QUEUE, 0);
	}
	bpf_map_update_elem(&issued, &key, &now, BPF_ANY);
	return 0;
}

SEC("tp_btf/block_rq_requeue")
int on_requeue(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	int idx = rq_index(rq);
	if (idx < 0)
		return 0;
	struct counters *c = counters_of(idx);
	if (c)
		__sync_fetch_and_add(&c->requeues, 1);
	__u64 key = (__u64)rq;
	bpf_map_delete_elem(&issued, &key);
	return 0;
}

SEC("tp_btf/block_rq_complete")
int on_complete(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	int idx = rq_index(rq);
	if (idx < 0)
		return 0;
	__u64 key = (__u64)rq;
	__u64 *t = bpf_map_lookup_elem(&issued, &key);
	if (!t)
		return 0; // issued before the tracer started, or a later part of one completion
	__u64 now = bpf_ktime_get_ns();
	if (now >= *t)
		record(idx, DEVICE, now - *t);
	bpf_map_delete_elem(&issued, &key);
	struct counters *c = counters_of(idx);
	if (c) {
		__sync_fetch_and_add(&c->requests, 1);
		__sync_fetch_and_add(&c->bytes, (__u32)ctx[2]);
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
