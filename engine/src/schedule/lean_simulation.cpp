// The lean simulation: the makespan of the event simulation (simulate_virtual_pipeline in
// pipeline_schedule.cpp) without its events, and without running every block.
//
// Each rank runs its blocks in its schedule's order; a block starts when the rank is free and
// its input has arrived, so every time is a max of sums of block and message times (max-plus
// algebra), independent of the order the simulation visits the ranks in. Two things make it lean:
//
// - State is small: a virtual stage finishes its micro-batches in order, so `count` finished
//   means micro-batches [0, count) are done; each block's output is kept in a ring of `window`
//   slots per virtual stage until its consumer (the next virtual stage, or the same one's
//   backward) has read it, within a few rounds of the pipeline.
// - The steady state is extrapolated. Between warm-up and drain every rank's order repeats
//   (Schedule::steady_state); the simulation runs the ranks up to a cut one period at a time,
//   and once the state at a cut (each rank's position and free time, and every output not yet
//   read) equals the previous cut's shifted by one period in blocks, micro-batches and a time
//   Δ, the same max-plus update maps it forward again and again: the next S periods add S·Δ to
//   every time. The simulation jumps there and runs the drain. Times compare within a relative
//   1e-12 (floating-point sums in another order round differently; the tests named
//   LeanSimulationIsTheEventSimulation, in tests/engine/estimate_test.cpp and schedule_test.cpp,
//   hold the makespans to the event simulation's), and a state that does not repeat before the
//   drain is simply simulated to the end.
//
// A budget of blocks bounds the work (simulate_schedule_time_within, lean_simulation.h): the
// blocks run count against it, the extrapolated ones do not, so a deep pipeline whose state
// repeats costs what its warm-up, a few periods and its drain cost, whatever its micro-batches.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "schedule/lean_simulation.h"
#include "schedule/runnable.h"
#include "stepcast/pipeline.h"

namespace stepcast {

namespace {

// The pipeline's state at a cut: what the next period depends on.
struct Cut {
  std::vector<int64_t> next, fwd_count, bwd_count;
  std::vector<double> free_at, pending;  // pending: outputs not yet read, in a fixed order
};

// A block of one kind on one virtual stage, resolved once per pipeline: the rows of outputs
// (LeanPipeline::count_ and done_) it reads, writes and must find read before it overwrites a
// slot, the message its input crosses, the blocking send it waits out, its duration. A forward
// reads the previous virtual stage's forwards, a backward the next one's backwards (the last
// virtual stage's: its own forward, on its rank, with no message); the first forward reads
// nothing and a weight-gradient block neither reads nor writes: they read the row that is always
// ready, zeros (0 + 0 = 0, and max(free, 0) = free: the same times as without the row), and
// write a scratch row nothing reads. One path for every block: no branch on its kind or on
// the pipeline's ends. The rows are also kept as pointers to their counts and rings, so that a
// block finds them without a multiplication.
struct Edge {
  int in = 0, out = 0, reader = 0;
  double in_message_s = 0, send_s = 0, duration_s = 0;
  const int64_t* in_count = nullptr;
  const double* in_done = nullptr;
  int64_t* out_count = nullptr;
  double* out_done = nullptr;
  const int64_t* reader_count = nullptr;
};

// A block of a rank's order: its micro-batch (plus the rank's shift, LeanPipeline::shift_) and
// edge. (No initializers: the buffers of them are written before they are read, not cleared.)
struct Cursor {
  int64_t micro_batch;
  const Edge* edge;
};

class LeanPipeline {
 public:
  LeanPipeline(const std::vector<double>& f, const std::vector<double>& b,
               const std::vector<double>& w, int p, int v, int64_t m,
               const std::vector<double>& p2p, bool blocking, const Schedule& schedule,
               const std::vector<double>& rank_start, uint64_t max_blocks)
      : p_(p), virtual_stages_(p * v),
        schedule_(schedule), shape_{p, v, m}, max_blocks_(max_blocks) {
    // Outputs wait for their reader a few rounds of the pipeline at most (the wrap from the last
    // rank to the first: a group of p micro-batches and the warm-ups' difference).
    while (window_ < 4 * (int64_t{p} + 1)) window_ *= 2;
    // Rows: the forwards' outputs per virtual stage, the backwards', the row always ready (a
    // count no micro-batch reaches, zeros: cleared) and the scratch row (never read). The others
    // are never read before written (the counts say what is): no need to clear.
    const int rows = 2 * virtual_stages_ + 2;
    done_.reset(new double[static_cast<size_t>(rows) * static_cast<size_t>(window_)]);
    std::fill_n(&done_[static_cast<size_t>(ready_row()) * window_], window_, 0.0);
    count_.assign(static_cast<size_t>(rows), 0);
    count_[static_cast<size_t>(ready_row())] = INT64_MAX;
    next_.assign(static_cast<size_t>(p), 0);
    free_at_.assign(static_cast<size_t>(p), 0.0);
    if (rank_start.size() == static_cast<size_t>(p)) free_at_ = rank_start;
    last_end_.assign(static_cast<size_t>(p), 0.0);
    // Where each virtual stage sits and what each edge's message takes, asked of the schedule
    // once here rather than for every block (a tenth of a deep pipeline's estimate otherwise).
    const auto message = [&](int k) { return detail::message_s(schedule, shape_, p2p, k); };
    const int last = virtual_stages_ - 1;
    edge_.resize(static_cast<size_t>(virtual_stages_) * kKinds);
    for (int vs = 0; vs < virtual_stages_; ++vs)
      for (int kind = 0; kind < kKinds; ++kind) {
        const auto k = static_cast<BlockKind>(kind);
        Edge& e = edge_[static_cast<size_t>(vs) * kKinds + kind];
        e.duration_s = detail::block_s(k, f[vs], b[vs], w[vs]);
        if (k == BlockKind::weight_grad) {  // its input is its own B's, earlier on this rank
          e = {ready_row(), scratch_row(), ready_row(), 0, 0, e.duration_s};
        } else if (k == BlockKind::forward) {
          e.in = vs > 0 ? fwd_row(vs - 1) : ready_row();
          e.in_message_s = message(vs - 1);
          e.out = fwd_row(vs);
          e.reader = vs == last ? bwd_row(vs) : fwd_row(vs + 1);
          e.send_s = blocking ? message(vs) : 0;
        } else {
          e.in = vs == last ? fwd_row(vs) : bwd_row(vs + 1);
          e.in_message_s = vs == last ? 0 : message(vs);
          e.out = bwd_row(vs);
          e.reader = vs > 0 ? bwd_row(vs - 1) : ready_row();
          e.send_s = blocking ? message(vs - 1) : 0;
        }
        e.in_count = &count_[static_cast<size_t>(e.in)];
        e.in_done = &done_[static_cast<size_t>(e.in) * static_cast<size_t>(window_)];
        e.out_count = &count_[static_cast<size_t>(e.out)];
        e.out_done = &done_[static_cast<size_t>(e.out) * static_cast<size_t>(window_)];
        e.reader_count = &count_[static_cast<size_t>(e.reader)];
      }
    rank_edge_.reset(new const Edge*[static_cast<size_t>(p) * static_cast<size_t>(v) * kKinds]);
    for (int i = 0; i < p; ++i)
      for (int c = 0; c < v; ++c) {
        const int vs = schedule.virtual_stage(shape_, i, c);
        for (int kind = 0; kind < kKinds; ++kind)
          rank_edge_[(static_cast<size_t>(i) * v + c) * kKinds + kind] =
              &edge_[static_cast<size_t>(vs) * kKinds + kind];
      }
    // Each rank's steady state, where the schedule has one with the same period on every rank:
    // what run_steady_state extrapolates over, and where place reads the blocks off the table.
    if (schedule.steady_state) {
      steady_.reserve(static_cast<size_t>(p));  // (one allocation, not one per doubling)
      for (int i = 0; i < p; ++i) steady_.push_back(schedule.steady_state(shape_, i));
      period_ = steady_[0].period_blocks;
      for (const auto& s : steady_)
        if (s.period_blocks != period_ ||
            s.period_micro_batches != steady_[0].period_micro_batches)
          period_ = 0;
      if (period_ > 0) {
        period_micro_batches_ = steady_[0].period_micro_batches;
        table_.reset(new Cursor[static_cast<size_t>(p) * static_cast<size_t>(period_)]);
      } else {
        steady_.clear();
      }
    }
    ahead_.reset(new Cursor[static_cast<size_t>(p) * kAhead]);
    at_.reset(new const Cursor*[static_cast<size_t>(p)]());
    buffered_.reset(new const Cursor*[static_cast<size_t>(p)]());
    shift_.assign(static_cast<size_t>(p), 0);
    length_.reserve(static_cast<size_t>(p));
    for (int i = 0; i < p; ++i) {
      length_.push_back(schedule.blocks_of_rank(shape_, i));
      place(i);
    }
  }

  // Every rank's steady state (empty: the schedule has none, or its ranks' periods differ).
  const std::vector<SteadyState>& steady() const { return steady_; }

  const std::vector<int64_t>& lengths() const { return length_; }
  const ScheduleShape& shape() const { return shape_; }
  // The latest free time of any block run: each rank's only grows (a block ends at the later of
  // it and its input plus a duration, and its send follows, none negative), so it is the ranks'
  // latest, read here rather than kept as a running maximum in advance's loop.
  double makespan_s() const {
    double out = 0;
    for (const double t : free_at_) out = std::max(out, t);
    return out;
  }
  int64_t blocks_run() const { return blocks_run_; }
  // A write would have overwritten an output not yet read (never seen for Megatron's orders):
  // the caller answers with the full simulation instead.
  bool overrun() const { return overrun_; }
  // The budget of blocks ran out before the simulation's end.
  bool exhausted() const { return exhausted_; }
  bool stopped() const { return overrun_ || exhausted_; }
  const std::vector<double>& rank_ends() const { return last_end_; }

  // Runs every rank's blocks below limit[i] whose inputs are ready, until none can run: in
  // passes over the ranks, first to last, each running its next block if it can. Any order that
  // runs only ready blocks gives the same times (the max-plus note above); this one follows the
  // pipeline: a forward wave crosses all ranks in one pass, and in the steady state every rank
  // runs one block a pass, its input written a pass or two before, so its branches predict.
  // (A list of the ranks that may go on, each run until it waits, took 1.3x the time of these
  // passes on GPT-3 175B's TP 8 x PP 16 x VPP 2 estimate, 53 against 40 us, for 5 % more
  // instructions: 990 k against 946 k, callgrind; its branches mispredicted 1.9x as often on a
  // 16 x 2 x 256 pipeline under cachegrind.)
  //
  // The loop reads the pipeline's state through locals: through the members, every count it
  // writes (an int64_t) might, for the compiler, have been any int64_t member, which it then
  // reloads (the window, the budget). 726 k to 719 k instructions for the deep
  // estimate above, and about 5 % less time (session 51). Running each rank on until it waits,
  // within a pass, ran 702 k instructions and took 1.3x the time: its branches do not predict.
  void advance(const std::vector<int64_t>& limit) {
    if (stopped()) return;
    const int p = p_;
    const int64_t* const lim = limit.data();
    int64_t* const next = next_.data();
    double* const free_at = free_at_.data();
    double* const last_end = last_end_.data();
    const Cursor** const at = at_.get();
    const Cursor** const buffered = buffered_.get();
    const int64_t* const shift = shift_.data();
    const int64_t window = window_, mask = window_ - 1;
    const uint64_t max_blocks = max_blocks_;
    int64_t run = blocks_run_;
    for (bool ran = true; ran;) {
      ran = false;
      for (int i = 0; i < p; ++i) {
        if (next[i] >= lim[i]) continue;
        if (static_cast<uint64_t>(run) >= max_blocks) {
          exhausted_ = true;
          ran = false;
          break;
        }
        const int64_t mb = at[i]->micro_batch + shift[i];
        const Edge& e = *at[i]->edge;
        if (*e.in_count <= mb) continue;
        // The slot this block writes held micro-batch mb - window: its reader must be done.
        if (mb >= window && *e.reader_count <= mb - window) {
          overrun_ = true;
          ran = false;
          break;
        }
        const int64_t slot = mb & mask;
        const double ready = e.in_done[slot] + e.in_message_s;
        const double end = std::max(free_at[i], ready) + e.duration_s;
        e.out_done[slot] = end;
        ++*e.out_count;
        const double free = end + e.send_s;
        free_at[i] = free;
        last_end[i] = end;
        ++run;
        ran = true;
        // On to the rank's next block, off its buffer of the blocks ahead (refilled out of
        // this loop: place).
        ++next[i];
        if (++at[i] == buffered[i]) place(i);
      }
    }
    blocks_run_ = run;
  }

  // The state at this cut, into `c` (its vectors keep their capacity from cut to cut: a deep
  // pipeline's cuts allocated five vectors each, a tenth of its estimate's allocations).
  void cut(Cut& c) const {
    const auto fwd = count_.begin(), bwd = fwd + virtual_stages_;
    c.next.assign(next_.begin(), next_.end());
    c.fwd_count.assign(fwd, bwd);
    c.bwd_count.assign(bwd, bwd + virtual_stages_);
    c.free_at.assign(free_at_.begin(), free_at_.end());
    c.pending.clear();
    c.pending.reserve(pending_count());
    for_each_pending([&](double t, int, int64_t, bool) { c.pending.push_back(t); });
  }

  // Jumps `periods` periods of `blocks` blocks per rank on, each `micro_batches` further and
  // `delta_s` later: what running them would give once the state repeats.
  void jump(int64_t periods, int64_t blocks, int64_t micro_batches, double delta_s) {
    std::vector<double> pending;
    pending.reserve(pending_count());
    for_each_pending([&](double t, int, int64_t, bool) { pending.push_back(t); });
    const int64_t mb_on = periods * micro_batches;
    const double time_on = static_cast<double>(periods) * delta_s;
    size_t k = 0;
    for_each_pending([&](double, int vs, int64_t mb, bool forward) {
      done(forward, vs, mb + mb_on) = pending[k++] + time_on;
    });
    for (int row = 0; row < 2 * virtual_stages_; ++row) count_[static_cast<size_t>(row)] += mb_on;
    for (int i = 0; i < p_; ++i) {
      next_[i] += periods * blocks;
      free_at_[i] += time_on;
      last_end_[i] += time_on;
      place(i);
    }
  }

 private:
  static constexpr int kKinds = 4;  // BlockKind's
  int fwd_row(int vs) const { return vs; }
  int bwd_row(int vs) const { return virtual_stages_ + vs; }
  int ready_row() const { return 2 * virtual_stages_; }
  int scratch_row() const { return 2 * virtual_stages_ + 1; }
  int64_t fwd_count(int vs) const { return count_[static_cast<size_t>(fwd_row(vs))]; }
  int64_t bwd_count(int vs) const { return count_[static_cast<size_t>(bwd_row(vs))]; }
  size_t slot(int row, int64_t mb) const {
    return static_cast<size_t>(row) * window_ + static_cast<size_t>(mb & (window_ - 1));
  }
  double& done(bool forward, int vs, int64_t mb) {
    return done_[slot(forward ? fwd_row(vs) : bwd_row(vs), mb)];
  }
  double done(bool forward, int vs, int64_t mb) const {
    return done_[slot(forward ? fwd_row(vs) : bwd_row(vs), mb)];
  }

  // Outputs written and not yet read: a forward's until the next virtual stage's forward (the
  // last one's: its own backward) reads it, a backward's until the previous virtual stage's.
  template <class Visit>
  void for_each_pending(Visit visit) const {
    for (int vs = 0; vs < virtual_stages_; ++vs) {
      const int64_t read = vs + 1 < virtual_stages_ ? fwd_count(vs + 1) : bwd_count(vs);
      for (int64_t mb = read; mb < fwd_count(vs); ++mb) visit(done(true, vs, mb), vs, mb, true);
      if (vs == 0) continue;
      for (int64_t mb = bwd_count(vs - 1); mb < bwd_count(vs); ++mb)
        visit(done(false, vs, mb), vs, mb, false);
    }
  }

  // How many for_each_pending visits (to reserve: grown one output at a time, the vectors of a
  // cut were most of a deep estimate's allocations). Counted by the same walk, so the two
  // cannot disagree; the walk is a few hundred outputs at most, a cut's twice.
  size_t pending_count() const {
    size_t n = 0;
    for_each_pending([&](double, int, int64_t, bool) { ++n; });
    return n;
  }

  // Rank i's blocks from next_[i] on (from the start, a jump, the end of those it had), up to
  // the end of the part of its order that holds it. Past its steady state's first period they are
  // read in place off the table of that period, each period `period_micro_batches` further on
  // (block_at's call and divisions were a quarter of the deep estimate's instructions); the
  // first period's are asked of the schedule into the table, the warm-up's and the drain's into
  // a buffer, kAhead at a time, through blocks_from's counters where the schedule has them
  // (block_at and its call were a third of the simulation's instructions after the table, on
  // GPT-3 175B's TP 8 x PP 16 x VPP 2 estimate). Out of advance's loop.
  [[gnu::noinline]] void place(int i) {
    const auto r = static_cast<size_t>(i);
    const int64_t k = next_[r];
    int64_t end = length_[r];  // the end of the part of the order k is in
    if (k >= end) return;
    Cursor* out = &ahead_[r * kAhead];
    shift_[r] = 0;
    if (period_ > 0) {
      const SteadyState& s = steady_[r];
      Cursor* const table = &table_[r * static_cast<size_t>(period_)];
      const int64_t d = k - s.first_block;
      if (d >= period_ && k < s.end_block) {  // the table, shifted by the periods since the first
        at_[r] = table + d % period_;
        buffered_[r] = table + std::min(period_, d % period_ + (s.end_block - k));
        shift_[r] = d / period_ * period_micro_batches_;
        return;
      }
      if (d < 0) {  // the warm-up
        end = s.first_block;
      } else if (d < period_) {  // the first period: into the table
        out = table + d;
        end = std::min(end, s.first_block + period_);
      }
    }
    const int64_t n = std::min<int64_t>(kAhead, end - k);
    ScheduleBlock* const blocks = scratch_.data();
    if (schedule_.blocks_from) {
      schedule_.blocks_from(shape_, i, k, n, blocks);
    } else {
      for (int64_t j = 0; j < n; ++j) blocks[j] = schedule_.block_at(shape_, i, k + j);
    }
    // A block's edge by its chunk and kind, off the rank's row of them.
    const Edge* const* const edges = &rank_edge_[r * static_cast<size_t>(shape_.chunks) * kKinds];
    for (int64_t j = 0; j < n; ++j)
      out[j] = {blocks[j].micro_batch,
                edges[blocks[j].chunk * kKinds + static_cast<int>(blocks[j].kind)]};
    at_[r] = out;
    buffered_[r] = out + n;
  }

  int p_, virtual_stages_;
  const Schedule& schedule_;
  ScheduleShape shape_;
  uint64_t max_blocks_;
  int64_t window_ = 1;
  std::unique_ptr<double[]> done_;  // [row][mb % window] (rows: fwd_row, bwd_row, ...)
  std::vector<int64_t> count_;       // [row]: outputs written (micro-batches [0, count) done)
  std::vector<int64_t> next_, length_;
  std::vector<Edge> edge_;           // [vs · kKinds + kind]
  // Each rank's blocks ahead: its next block at_[rank], the buffer's end buffered_[rank].
  static constexpr int kAhead = 32;
  std::unique_ptr<Cursor[]> ahead_;  // [rank · kAhead + j]
  std::vector<ScheduleBlock> scratch_ = std::vector<ScheduleBlock>(kAhead);  // (cleared once)
  // (Arrays, not vectors: a vector of pointers was 0.7 KB more of the page's module.)
  std::unique_ptr<const Cursor*[]> at_, buffered_;
  std::vector<int64_t> shift_;  // [rank]: micro-batches past its cursors' (the table's periods)
  std::unique_ptr<const Edge*[]> rank_edge_;  // [(rank · chunks + chunk) · kKinds + kind]
  std::vector<SteadyState> steady_;  // [rank], or empty
  int64_t period_ = 0, period_micro_batches_ = 0;
  std::unique_ptr<Cursor[]> table_;  // [rank · period + block]: the steady state's first period
  std::vector<double> free_at_;
  std::vector<double> last_end_;  // each rank's last block's end, its send aside
  int64_t blocks_run_ = 0;
  bool overrun_ = false;
  bool exhausted_ = false;
};

// Whether cut `b` is cut `a` one period on: positions `blocks` further, counts `micro_batches`
// further, every time `delta_s` later (to a relative 1e-12: the same sums, rounded in another
// order).
bool repeats(const Cut& a, const Cut& b, int64_t blocks, int64_t micro_batches, double delta_s) {
  if (a.pending.size() != b.pending.size()) return false;
  for (size_t i = 0; i < a.next.size(); ++i)
    if (b.next[i] != a.next[i] + blocks) return false;
  for (size_t vs = 0; vs < a.fwd_count.size(); ++vs)
    if (b.fwd_count[vs] != a.fwd_count[vs] + micro_batches ||
        b.bwd_count[vs] != a.bwd_count[vs] + micro_batches)
      return false;
  const auto same = [&](double x, double y) {
    return std::abs(y - x - delta_s) <= 1e-12 * std::max(std::abs(y), std::abs(delta_s));
  };
  for (size_t i = 0; i < a.free_at.size(); ++i)
    if (!same(a.free_at[i], b.free_at[i])) return false;
  for (size_t i = 0; i < a.pending.size(); ++i)
    if (!same(a.pending[i], b.pending[i])) return false;
  return true;
}

// Runs the pipeline to a cut one period at a time until the state repeats, then jumps over the
// steady periods that remain before any rank's drain.
void run_steady_state(LeanPipeline& pipe) {
  const int p = pipe.shape().stages;
  const std::vector<SteadyState>& steady = pipe.steady();
  if (steady.empty()) return;
  const int64_t period = steady[0].period_blocks;
  // Cuts at least 2p blocks apart, so a cut's comparison costs less than the period it checks.
  const int64_t periods_per_cut = std::max<int64_t>(1, (2 * int64_t{p} + period - 1) / period);
  const int64_t blocks = period * periods_per_cut;
  const int64_t micro_batches = steady[0].period_micro_batches * periods_per_cut;
  int64_t cuts = INT64_MAX;  // cuts that fit in every rank's steady state
  for (const auto& s : steady) cuts = std::min(cuts, (s.end_block - s.first_block) / blocks);
  // The cuts sit as late in the steady states as keeps that many: `offset` blocks past their
  // start, what the shortest steady state has over its whole cuts. A jump is never shorter, and
  // the pipeline has that much longer to settle (it leaves the warm-up's transient within a
  // period or two) before the first comparison: GPT-3 175B on TP 8 x PP 16 x VPP 2 repeats at
  // the second cut with it, at the third without (4,096 blocks simulated, 3,072 with it).
  int64_t offset = INT64_MAX;
  for (const auto& s : steady)
    offset = std::min(offset, s.end_block - s.first_block - cuts * blocks);
  std::vector<int64_t> limit(static_cast<size_t>(p));
  Cut before, now;  // (swapped, not moved: each keeps its buffers)
  for (int64_t g = 0; g < cuts; ++g) {
    for (int i = 0; i < p; ++i) limit[i] = steady[i].first_block + offset + g * blocks;
    pipe.advance(limit);
    if (pipe.stopped()) return;
    pipe.cut(now);
    bool steady_now = true;
    for (int i = 0; i < p; ++i) steady_now = steady_now && now.next[i] >= steady[i].first_block;
    if (steady_now && !before.next.empty()) {
      const double delta_s = now.free_at[0] - before.free_at[0];
      if (delta_s >= 0 && repeats(before, now, blocks, micro_batches, delta_s)) {
        pipe.jump(cuts - g, blocks, micro_batches, delta_s);
        return;
      }
    }
    if (steady_now) std::swap(before, now);
  }
}

}  // namespace

ScheduleTime simulate_schedule_time(const std::vector<double>& fwd,
                                    const std::vector<double>& bwd, int p, int64_t m, int v,
                                    const std::vector<double>& p2p, bool p2p_blocking,
                                    int watch, const Schedule* schedule,
                                    const std::vector<double>& weight_grad_s,
                                    const std::vector<double>& rank_start_s) {
  ScheduleTime out;
  detail::simulate_schedule_time_within(fwd, bwd, p, m, v, p2p, p2p_blocking, watch, schedule,
                                        weight_grad_s, rank_start_s, UINT64_MAX, out);
  return out;
}

bool detail::simulate_schedule_time_within(const std::vector<double>& fwd,
                                           const std::vector<double>& bwd, int p, int64_t m,
                                           int v, const std::vector<double>& p2p,
                                           bool p2p_blocking, int watch,
                                           const Schedule* schedule,
                                           const std::vector<double>& weight_grad_s,
                                           const std::vector<double>& rank_start_s,
                                           uint64_t max_blocks, ScheduleTime& out) {
  out = {};
  if (p == 0 || m <= 0) return true;
  std::vector<double> f = fwd, b = bwd, w = weight_grad_s;
  schedule = detail::runnable(f, b, w, p, m, v, schedule);
  LeanPipeline pipe(f, b, w, p, v, m, p2p, p2p_blocking, *schedule, rank_start_s,
                    max_blocks);
  run_steady_state(pipe);
  if (!pipe.stopped()) pipe.advance(pipe.lengths());
  if (pipe.exhausted()) {
    out.blocks_run = pipe.blocks_run();
    return false;
  }
  if (pipe.overrun()) {  // the full simulation, summed as the estimate sums it
    const uint64_t all = schedule_blocks({p, v, m});
    if (all > max_blocks - static_cast<uint64_t>(pipe.blocks_run())) {
      out.blocks_run = pipe.blocks_run();
      return false;
    }
    double full = 0;
    const auto events = simulate_virtual_pipeline(f, b, p, m, v, p2p, p2p_blocking, &full,
                                                  schedule, w, rank_start_s);
    out = {full, 0, 0, static_cast<int64_t>(all), {}};  // (the lean part it replaces aside)
    out.rank_end_s = detail::rank_ends(events, p);
    for (const auto& e : events)
      if (e.stage == watch)
        (e.kind == PipelineEvent::Kind::send ? out.sends_s : out.busy_s) += e.end_s - e.start_s;
    return true;
  }
  out.makespan_s = pipe.makespan_s();
  out.blocks_run = pipe.blocks_run();
  out.rank_end_s = pipe.rank_ends();
  // The watched rank runs a forward and a backward of each of its chunks per micro-batch, and
  // with blocking messages waits out each send (a forward's to the next virtual stage, a
  // backward's to the previous one).
  if (watch >= 0 && watch < p) {
    const int last = p * v - 1;
    const double mbd = static_cast<double>(m);
    for (int c = 0; c < v; ++c) {
      const int vs = schedule->virtual_stage(pipe.shape(), watch, c);
      out.busy_s += mbd * (f[vs] + b[vs]);
      if (!p2p_blocking) continue;
      if (vs < last) out.sends_s += mbd * detail::message_s(*schedule, pipe.shape(), p2p, vs);
      if (vs > 0) out.sends_s += mbd * detail::message_s(*schedule, pipe.shape(), p2p, vs - 1);
    }
  }
  return true;
}

std::vector<double> detail::rank_ends(const std::vector<PipelineEvent>& events, int ranks) {
  std::vector<double> end(static_cast<size_t>(std::max(ranks, 0)), 0.0);
  for (const auto& e : events)
    if (e.kind != PipelineEvent::Kind::send && e.stage >= 0 && e.stage < ranks)
      end[static_cast<size_t>(e.stage)] = std::max(end[static_cast<size_t>(e.stage)], e.end_s);
  return end;
}

}  // namespace stepcast
