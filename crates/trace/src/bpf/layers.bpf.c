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
// and, for the loading process's own io_uring reads and writes (not per disk: io_uring does
// not know the disk when it takes a request), the kernel's whole time for each (1 in
// 2^ring_shift of them, chosen at random when submitted):
//
//   ring       io_uring_submit_req -> io_uring_complete   (the completion posted to the
//                                                          ring, after the wake-up)
//
// Histograms use the buckets of iogauge_model::layers::bucket_of (16 per power of two); the
// loader reads the maps once per interval. Requests, bytes, merges, splits and requeues are
// counted for every request; the stages are timed for 1 request in 2^shift (`sampling`, set
// by the loader every interval so that a few thousand requests a second are timed), each
// timed request counting 2^shift times in its stage's count, sum and histogram, so they
// estimate all requests. A request is timed or not by a hash of its first sector and a salt
// the loader changes every 10 s: every program of one request decides alike with no map
// lookup, and a sector written over and over is not always left out. An untimed request
// costs each program little more than being called (about 0.1 µs here); a timed one about
// 1.6 µs on this 2-CPU VM: counters and histograms are per CPU (no atomic add, no cache
// line shared between CPUs; the loader sums them), the traced disks are constants set at
// load time, bios' start times sit in a lock-free table and requests' stages are written in
// place.
// The kernel structs below are the few fields used, relocated against the running kernel's
// BTF (CO-RE), so no kernel headers are needed.

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
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_MAP_TYPE_LRU_HASH 9
#define BPF_ANY 0

// Helpers by their number in include/uapi/linux/bpf.h.
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value,
                                   __u64 flags) = (void *)2;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static __u32 (*bpf_get_prandom_u32)(void) = (void *)7;
static __u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static long (*bpf_get_current_comm)(void *buf, __u32 size) = (void *)16;
static long (*bpf_probe_read_kernel)(void *dst, __u32 size, const void *src) = (void *)113;

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

struct kernfs_node {
	__u64 id;
} CORE;

struct cgroup {
	struct kernfs_node *kn;
} CORE;

struct cgroup_subsys_state {
	struct cgroup *cgroup;
} CORE;

struct blkcg {
	struct cgroup_subsys_state css;
} CORE;

struct blkcg_gq {
	struct blkcg *blkcg;
} CORE;

struct css_set {
	struct cgroup_subsys_state *subsys[12];
} CORE;

struct task_struct {
	struct css_set *cgroups;
} CORE;

struct super_block {
	__u32 s_dev;
} CORE;

struct inode {
	unsigned long i_ino;
	__u32 i_rdev;
	struct super_block *i_sb;
} CORE;

struct address_space {
	struct inode *host;
} CORE;

struct page {
	struct address_space *mapping;
} CORE;

struct folio {
	struct address_space *mapping;
} CORE;

struct bio_vec {
	struct page *bv_page;
} CORE;

struct bvec_iter {
	sector_t bi_sector;
	unsigned int bi_size;
} CORE;

struct bio {
	struct block_device *bi_bdev;
	unsigned int bi_opf;
	struct bvec_iter bi_iter;
	struct blkcg_gq *bi_blkg;
	struct bio_vec *bi_io_vec;
} CORE;

struct request {
	struct request_queue *q;
	struct bio *bio;
	unsigned int cmd_flags;
	__u64 start_time_ns;
	sector_t __sector;
	unsigned int __data_len;
} CORE;

struct io_cqe {
	__u64 user_data;
} CORE;

struct io_kiocb {
	__u8 opcode;
	struct io_cqe cqe;
	void *ctx;
} CORE;

struct io_uring_cqe {
	__u64 user_data;
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

// The disks to trace, as the kernel's dev_t (major << 20 | minor, MKDEV), at their slots;
// set by the loader before the programs are verified.
volatile const __u32 traced[MAX_DISKS];
volatile const __u32 n_traced;

// slot * 2 + direction; per CPU. The loader sizes it to the traced disks.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_DISKS * 2);
	__type(key, __u32);
	__type(value, struct counters);
} counters SEC(".maps");

// (slot * 2 + direction) * STAGES + stage; per CPU. The loader sizes it to the traced disks.
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_DISKS * 2 * STAGES);
	__type(key, __u32);
	__type(value, struct hist);
} hists SEC(".maps");

// Attribution: which requests are the job's. The job's cgroups in the io controller's
// hierarchy (blkio in cgroup v1), as the kernel numbers them (the kernfs node id, which is
// the inode number of the cgroup's directory), set by the loader; none: attribution off.
// A request is the job's when its bios carry one of these cgroups (a bio is tagged with its
// submitter's cgroup when it is made, and blk-mq merges only bios of one cgroup), or, for
// page-cache writeback (done by a flusher thread, tagged with the root cgroup on cgroup v1),
// when its first page belongs to one of the job's files (`our_inodes`).
#define MAX_OURS 4
volatile const __u64 ours_cg[MAX_OURS];
volatile const __u32 n_ours;
// The io controller's index in a task's `css_set.subsys` (its line in /proc/cgroups).
volatile const __u32 io_subsys;

// The job's requests alone, laid out as `counters` and `hists` (sized by the loader alike).
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_DISKS * 2);
	__type(key, __u32);
	__type(value, struct counters);
} ours_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_DISKS * 2 * STAGES);
	__type(key, __u32);
	__type(value, struct hist);
} ours_hists SEC(".maps");

// A file as the kernel knows it: its inode number and its filesystem's device (MKDEV's
// encoding); a block device's own page cache by its device number, `dev` 0.
struct file_key {
	__u64 ino;
	__u64 dev;
};

// The job's files (its targets), set by the loader: their pages' writeback is the job's.
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct file_key);
	__type(value, __u8);
} our_inodes SEC(".maps");

// Everyone else's bios on the traced disks, by the process that queued them (a flusher
// thread for writeback); the loader reads it as `Origin` in src/maps.rs.
struct origin {
	char comm[16];
	__u64 bios;
	__u64 bytes;
	__u64 writeback; // bios of page-cache pages (written back for someone)
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct origin);
} others SEC(".maps");

// Which requests are timed: written by the loader every interval (src/lib.rs `Sampling`).
struct sampling {
	__u32 shift;      // block requests: 1 in 2^shift is timed
	__u32 salt;       // mixed into a request's hash; changed every 10 s
	__u32 ring_shift; // this process's io_uring requests: 1 in 2^ring_shift is timed
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sampling);
} sampling SEC(".maps");

// When a bio was queued, by (disk, first sector): a request's first bio keeps its sector, and
// a split's remainder is given its parent's time (block_split). A table of QUEUED_PAIRS
// pairs of slots, a (disk, sector) hashed to one pair, rather than a hash map: a bio's time
// is written and taken with no lock and no allocation (a hash map's update and delete cost
// about 0.4 µs each here, more than all the rest of a request's tracing). A bio whose pair holds two other bios
// still waiting evicts the older; its request then has no pre-queue time (the stage's count
// falls below the requests'): with tens of thousands of pairs and bios waiting in the
// hundreds, a small fraction of a percent.
#define QUEUED_PAIRS 32768
#define QUEUED_BITS 15

struct queued_slot {
	__u64 sector;
	__u64 at; // 0: empty
	__u32 dev;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, QUEUED_PAIRS * 2);
	__type(key, __u32);
	__type(value, struct queued_slot);
} queued SEC(".maps");

// A request's stage and when it began, by the request's address: inserted, issued, or done
// (completed or requeued). A plain hash, never an LRU one (an LRU map may evict a live entry
// before it is full, losing a request's stage). Entries are written in place and never
// deleted: a queue's requests are preallocated, so their addresses are a bounded set (the
// loader sizes the map to twice the traced disks' requests), and a hash update or delete
// costs a request more than all the rest of its tracing.
enum state { DONE, INSERTED, ISSUED };

// When a request's stage began, and which stage.
struct start {
	__u64 at;
	__u64 state;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64);
	__type(value, struct start);
} started SEC(".maps");

// The process whose io_uring I/Os are timed: the iogauge that loaded the programs.
volatile const __u32 ring_tgid;

// Its timed io_uring requests in flight, by a hash of their `user_data` (iogauge's engine
// gives each request in flight its own): an array, not a hash map, as an array lookup costs
// next to nothing. A timed request whose slot another timed request in flight takes loses
// its time (its completion finds another key there): with a few timed requests in flight in
// 4096 slots, rarely.
#define RING_SLOTS 4096
#define RING_BITS 12

struct ring_slot {
	__u64 req;    // the request's user_data
	__u64 ring;   // its ring (the kernel's io_ring_ctx): each worker's ring reuses user_data
	__u64 at;     // when it was submitted; 0: none in flight
	__u32 dir;    // 0 read, 1 write
	__u32 weight; // 2^ring_shift when it was submitted
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RING_SLOTS);
	__type(key, __u32);
	__type(value, struct ring_slot);
} ring_started SEC(".maps");

// The ring stage per direction: count and sum (as `struct counters`' first stage), per CPU.
struct ring_counters {
	__u64 count;
	__u64 sum_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct ring_counters);
} ring_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct hist);
} ring_hists SEC(".maps");

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
	__u32 n = n_traced;
	for (__u32 slot = 0; slot < MAX_DISKS && slot < n; slot++)
		if (traced[slot] == dev)
			return (int)(slot * 2 + op);
	return -1;
}

// One time of `ns`, standing for `w` requests, added to a stage's count, sum and histogram.
static __attribute__((always_inline)) void add(__u64 *count, __u64 *sum, struct hist *h, __u64 ns,
					       __u64 w)
{
	*count += w;
	*sum += ns * w;
	__u64 b = bucket_of(ns);
	// bucket_of is below BUCKETS already; the mask, which the compiler cannot drop behind
	// the barrier, proves it to the verifier.
	asm volatile("%0 &= 1023" : "+r"(b));
	h->buckets[b] += w;
}

// How many requests a request whose first sector is `sector` stands for when it is timed
// (2^shift), or 0 when it is not: timed when the top `shift` bits of a hash of the sector
// and the salt are zero. A request decides alike at each of its tracepoints unless the
// loader changed the sampling in between (then its stages may go untimed, or the next
// program finds no start: never a wrong time).
// The sampling the loader last set.
static __attribute__((always_inline)) struct sampling *sampling_now(void)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&sampling, &zero);
}

static __attribute__((always_inline)) __u64 weight_of(__u64 sector)
{
	struct sampling *s = sampling_now();
	if (!s)
		return 0;
	__u32 shift = s->shift & 31;
	if (!shift)
		return 1;
	__u64 h = (sector ^ s->salt) * 0xD6E8FEB86659FD93ULL;
	if (h >> (64 - shift))
		return 0;
	return 1ULL << shift;
}

static __attribute__((always_inline)) struct counters *counters_of(int idx)
{
	__u32 i = idx;
	return bpf_map_lookup_elem(&counters, &i);
}

static __attribute__((always_inline)) void record(int idx, enum stage s, __u64 ns, __u64 w,
						 int ours)
{
	struct counters *c = counters_of(idx);
	__u32 h = (__u32)idx * STAGES + s;
	struct hist *hist = bpf_map_lookup_elem(&hists, &h);
	if (!c || !hist)
		return;
	add(&c->count[s], &c->sum_ns[s], hist, ns, w);
	if (!ours)
		return;
	__u32 i = idx;
	c = bpf_map_lookup_elem(&ours_counters, &i);
	hist = bpf_map_lookup_elem(&ours_hists, &h);
	if (c && hist)
		add(&c->count[s], &c->sum_ns[s], hist, ns, w);
}

static __attribute__((always_inline)) int rq_index(struct request *rq)
{
	return index_of(dev_of(rq->q->disk), rq->cmd_flags);
}

static __attribute__((always_inline)) int cg_ours(__u64 id)
{
	__u32 n = n_ours;
	for (__u32 i = 0; i < MAX_OURS && i < n; i++)
		if (ours_cg[i] == id)
			return 1;
	return 0;
}

// Whether `bio` carries page-cache pages (writeback or a buffered read), and of which file
// (`k`): its first page's mapping's inode. Read with bpf_probe_read_kernel, as numbers: the
// verifier allows no bit test on a pointer (the mapping's low bits mark anonymous pages).
static __attribute__((always_inline)) int file_of(struct bio *bio, struct file_key *k)
{
	struct bio_vec *v = bio->bi_io_vec;
	if (!v)
		return 0;
	struct page *pg = v->bv_page;
	if (!pg)
		return 0;
	__u64 m = 0;
	if (bpf_probe_read_kernel(&m, sizeof(m), &pg->mapping) || !m || (m & 3))
		return 0;
	__u64 host = 0;
	if (bpf_probe_read_kernel(&host, sizeof(host), &((struct address_space *)m)->host) ||
	    !host)
		return 0;
	struct inode *in = (struct inode *)host;
	__u32 rdev = 0;
	bpf_probe_read_kernel(&rdev, sizeof(rdev), &in->i_rdev);
	if (rdev) {
		k->ino = rdev;
		k->dev = 0;
		return 1;
	}
	__u64 sb = 0;
	__u32 sdev = 0;
	bpf_probe_read_kernel(&k->ino, sizeof(k->ino), &in->i_ino);
	bpf_probe_read_kernel(&sb, sizeof(sb), &in->i_sb);
	if (sb)
		bpf_probe_read_kernel(&sdev, sizeof(sdev), &((struct super_block *)sb)->s_dev);
	k->dev = sdev;
	return 1;
}

// Whether `bio` is the job's: its cgroup, or a page of one of the job's files (`*cached`:
// whether it carries page-cache pages at all).
static __attribute__((always_inline)) int bio_ours(struct bio *bio, int *cached)
{
	struct blkcg_gq *g = bio->bi_blkg;
	if (g && cg_ours(g->blkcg->css.cgroup->kn->id))
		return 1;
	struct file_key k = {};
	*cached = file_of(bio, &k);
	return *cached && bpf_map_lookup_elem(&our_inodes, &k) != 0;
}

static __attribute__((always_inline)) int rq_ours(struct request *rq)
{
	if (!n_ours)
		return 0;
	struct bio *bio = rq->bio;
	int cached = 0;
	return bio && bio_ours(bio, &cached);
}

// The first slot of the pair that (dev, sector) hashes to (Fibonacci hashing).
static __attribute__((always_inline)) __u32 pair_of(__u32 dev, __u64 sector)
{
	__u64 h = (sector ^ ((__u64)dev << 40)) * 0x9E3779B97F4A7C15ULL;
	return (__u32)(h >> (64 - QUEUED_BITS)) * 2;
}

// Whether slot `s` holds the waiting bio (dev, sector).
static __attribute__((always_inline)) int holds(struct queued_slot *s, __u32 dev, __u64 sector)
{
	return s->at && s->dev == dev && s->sector == sector;
}

// The slot of a waiting bio (dev, sector), or 0.
static __attribute__((always_inline)) struct queued_slot *waiting(__u32 dev, __u64 sector)
{
	__u32 i = pair_of(dev, sector);
	struct queued_slot *a = bpf_map_lookup_elem(&queued, &i);
	i += 1;
	struct queued_slot *b = bpf_map_lookup_elem(&queued, &i);
	if (a && holds(a, dev, sector))
		return a;
	if (b && holds(b, dev, sector))
		return b;
	return 0;
}

// Notes that bio (dev, sector) waits since `at`: in its own slot if it has one, else an
// empty one of its pair, else over the older of the two.
static __attribute__((always_inline)) void wait_from(__u32 dev, __u64 sector, __u64 at)
{
	__u32 i = pair_of(dev, sector);
	struct queued_slot *a = bpf_map_lookup_elem(&queued, &i);
	i += 1;
	struct queued_slot *b = bpf_map_lookup_elem(&queued, &i);
	if (!a || !b)
		return;
	struct queued_slot *s;
	if (holds(a, dev, sector))
		s = a;
	else if (holds(b, dev, sector))
		s = b;
	else if (!a->at)
		s = a;
	else if (!b->at)
		s = b;
	else
		s = a->at <= b->at ? a : b;
	s->dev = dev;
	s->sector = sector;
	s->at = at;
}

// The pre-queue stage of `rq`, ending `now`: from its first bio's queueing.
static __attribute__((always_inline)) void pre_queue(struct request *rq, int idx, __u64 now,
						     __u64 w, int ours)
{
	struct queued_slot *s = waiting(dev_of(rq->q->disk), rq->__sector);
	if (!s)
		return;
	if (now >= s->at)
		record(idx, PRE_QUEUE, now - s->at, w, ours);
	s->at = 0;
}

// Another process's bio on a traced disk, counted under the process that queued it.
static __attribute__((always_inline)) void theirs(struct bio *bio, int cached)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct origin *o = bpf_map_lookup_elem(&others, &tgid);
	if (!o) {
		struct origin fresh = {};
		bpf_get_current_comm(fresh.comm, sizeof(fresh.comm));
		bpf_map_update_elem(&others, &tgid, &fresh, BPF_ANY);
		o = bpf_map_lookup_elem(&others, &tgid);
		if (!o)
			return;
	}
	__sync_fetch_and_add(&o->bios, 1);
	__sync_fetch_and_add(&o->bytes, bio->bi_iter.bi_size);
	if (cached && (bio->bi_opf & 1))
		__sync_fetch_and_add(&o->writeback, 1);
}

SEC("tp_btf/block_bio_queue")
int on_bio_queue(__u64 *ctx)
{
	struct bio *bio = (struct bio *)ctx[0];
	__u32 dev = dev_of(bio->bi_bdev->bd_disk);
	if (index_of(dev, bio->bi_opf) < 0)
		return 0;
	int cached = 0;
	if (n_ours && !bio_ours(bio, &cached))
		theirs(bio, cached);
	__u64 sector = bio->bi_iter.bi_sector;
	if (!weight_of(sector))
		return 0;
	wait_from(dev, sector, bpf_ktime_get_ns());
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
		c->splits += 1;
	// Timed on when both parts are (else the remainder's request has no pre-queue time).
	__u64 sector = bio->bi_iter.bi_sector, rest = (__u32)ctx[1];
	if (!weight_of(sector) || !weight_of(rest))
		return 0;
	struct queued_slot *s = waiting(dev, sector);
	if (s)
		wait_from(dev, rest, s->at);
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
		c->merges += 1;
	__u64 sector = bio->bi_iter.bi_sector;
	if (!weight_of(sector))
		return 0;
	struct queued_slot *s = waiting(dev, sector);
	if (s)
		s->at = 0;
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

// Sets request `key`'s start in `started`, in place when it has one (no allocation).
static __attribute__((always_inline)) void set_start(struct start *st, __u64 key, __u64 now,
						     __u64 state)
{
	if (st) {
		st->at = now;
		st->state = state;
	} else {
		struct start fresh = {.at = now, .state = state};
		bpf_map_update_elem(&started, &key, &fresh, BPF_ANY);
	}
}

SEC("tp_btf/block_rq_insert")
int on_insert(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	__u64 w = weight_of(rq->__sector);
	if (!w)
		return 0;
	int idx = rq_index(rq);
	if (idx < 0)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	pre_queue(rq, idx, now, w, rq_ours(rq));
	__u64 key = (__u64)rq;
	set_start(bpf_map_lookup_elem(&started, &key), key, now, INSERTED);
	return 0;
}

SEC("tp_btf/block_rq_issue")
int on_issue(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	__u64 w = weight_of(rq->__sector);
	if (!w)
		return 0;
	int idx = rq_index(rq);
	if (idx < 0)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u64 key = (__u64)rq;
	struct start *st = bpf_map_lookup_elem(&started, &key);
	// A stage older than the request's allocation belongs to an earlier life of the same
	// request struct (one merged into another after its insert, say): not this one's.
	__u64 state = st && st->at >= rq->start_time_ns ? st->state : DONE;
	if (state == ISSUED) {
		// Issued again before it completed (the driver was busy and the request was
		// dispatched once more, seen on virtio-blk without a block_rq_requeue): its device
		// time runs from this issue; its stages before were counted at the first.
		st->at = now;
		return 0;
	}
	int ours = rq_ours(rq);
	if (state == INSERTED) {
		if (now >= st->at)
			record(idx, QUEUE, now - st->at, w, ours);
	} else {
		// Issued without being inserted (no scheduler, or a direct issue): its pre-queue
		// stage ends here and it spent no time in the queue.
		pre_queue(rq, idx, now, w, ours);
		record(idx, QUEUE, 0, w, ours);
	}
	set_start(st, key, now, ISSUED);
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
		c->requeues += 1;
	if (!weight_of(rq->__sector))
		return 0;
	__u64 key = (__u64)rq;
	struct start *st = bpf_map_lookup_elem(&started, &key);
	if (st)
		st->state = DONE;
	return 0;
}

SEC("tp_btf/block_rq_complete")
int on_complete(__u64 *ctx)
{
	struct request *rq = (struct request *)ctx[0];
	int idx = rq_index(rq);
	if (idx < 0)
		return 0;
	// The completion's time first, before the counting and the attribution below, as the
	// issue's is taken before its work: else their cost lands in the device stage.
	__u64 w = weight_of(rq->__sector);
	__u64 now = w ? bpf_ktime_get_ns() : 0;
	// Every request counts, once, at the completion of its last part (a request completed
	// in parts passes here once for each, its length still to complete shrinking).
	__u32 done = (__u32)ctx[2];
	int ours = rq_ours(rq);
	struct counters *c = counters_of(idx);
	if (c) {
		c->bytes += done;
		if (done >= rq->__data_len)
			c->requests += 1;
	}
	__u32 i = idx;
	struct counters *o = ours ? bpf_map_lookup_elem(&ours_counters, &i) : 0;
	if (o) {
		o->bytes += done;
		if (done >= rq->__data_len)
			o->requests += 1;
	}
	if (!w)
		return 0;
	__u64 key = (__u64)rq;
	struct start *st = bpf_map_lookup_elem(&started, &key);
	// Not issued while timed (before the tracer started, or the sampling changed since), a
	// later part of one completion, or an earlier life of the same request struct.
	if (!st || st->state != ISSUED || st->at < rq->start_time_ns)
		return 0;
	if (now >= st->at)
		record(idx, DEVICE, now - st->at, w, ours);
	st->state = DONE;
	return 0;
}

// io_uring's read and write operations (enum io_uring_op): 0 for reads, 1 for writes, -1
// for anything else.
static __attribute__((always_inline)) int ring_dir(__u8 op)
{
	switch (op) {
	case 1:  // IORING_OP_READV
	case 4:  // IORING_OP_READ_FIXED
	case 22: // IORING_OP_READ
		return 0;
	case 2:  // IORING_OP_WRITEV
	case 5:  // IORING_OP_WRITE_FIXED
	case 23: // IORING_OP_WRITE
		return 1;
	}
	return -1;
}

// The slot of the io_uring request with `user_data` in `ring_started` (Fibonacci hashing).
// Each worker's ring reuses the same user_data, so a slot also holds its ring, compared (a
// program may compare a pointer, not compute with one): two rings' requests with one
// user_data share a slot, the later timed one taking it (the earlier goes untimed, never
// wrongly timed).
static __attribute__((always_inline)) struct ring_slot *ring_slot_of(__u64 req)
{
	__u32 i = (__u32)((req * 0x9E3779B97F4A7C15ULL) >> (64 - RING_BITS));
	return bpf_map_lookup_elem(&ring_started, &i);
}

SEC("tp_btf/io_uring_submit_req")
int on_ring_submit(__u64 *ctx)
{
	if ((__u32)(bpf_get_current_pid_tgid() >> 32) != ring_tgid)
		return 0;
	struct io_kiocb *req = (struct io_kiocb *)ctx[0];
	int dir = ring_dir(req->opcode);
	if (dir < 0)
		return 0;
	__u64 key = req->cqe.user_data, ring = (__u64)req->ctx;
	struct ring_slot *s = ring_slot_of(key);
	struct sampling *smp = sampling_now();
	if (!s || !smp)
		return 0;
	__u32 shift = smp->ring_shift & 31;
	if (shift && (bpf_get_prandom_u32() & ((1U << shift) - 1))) {
		// Not timed: an earlier request with its user_data is over (written only then: a
		// line both CPUs write costs more than the test).
		if (s->req == key && s->ring == ring && s->at)
			s->at = 0;
		return 0;
	}
	s->req = key;
	s->ring = ring;
	s->at = bpf_ktime_get_ns();
	s->dir = dir;
	s->weight = 1U << shift;
	return 0;
}

SEC("tp_btf/io_uring_complete")
int on_ring_complete(__u64 *ctx)
{
	// Posted by a thread of the process that submitted it (io_uring runs completions as
	// task work of the submitting task, or in its io-wq workers).
	if ((__u32)(bpf_get_current_pid_tgid() >> 32) != ring_tgid)
		return 0;
	struct io_uring_cqe *cqe = (struct io_uring_cqe *)ctx[2];
	__u64 key = cqe->user_data, ring = ctx[0];
	struct ring_slot *s = ring_slot_of(key);
	if (!s || s->req != key || s->ring != ring || !s->at)
		return 0;
	__u64 now = bpf_ktime_get_ns();
	__u32 dir = s->dir & 1;
	__u64 ns = now >= s->at ? now - s->at : 0;
	s->at = 0;
	struct ring_counters *c = bpf_map_lookup_elem(&ring_counters, &dir);
	struct hist *h = bpf_map_lookup_elem(&ring_hists, &dir);
	if (!c || !h)
		return 0;
	add(&c->count, &c->sum_ns, h, ns, s->weight);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
