// Session: one tracing session in one process — the CUPTI subscription, the
// buffer pool, the record converter, the writer thread and the trace file —
// from Start() (at cuInit, via InitializeInjection) to Finalize() (at exit
// or on a fatal signal). injection/lifecycle.cc owns the one production
// Session and deliberately never destroys it: CUPTI may call back late.
//
// CUPTI order in Start(): cuptiGetVersion, cuptiSubscribe(_v2),
// cuptiActivityRegisterTimestampCallback, cuptiSetThreadIdType,
// [cuptiActivitySetAttribute, cuptiActivityFlushPeriod], then the trace file
// and writer thread, cuptiActivityRegisterCallbacks, and cuptiActivityEnable
// for each kind (plus cuptiActivityEnableRuntimeApi/DriverApi per call) —
// all before cuInit returns, so before any module load or graph capture.
//
// One idea a file, all in injection/session/: session.cc (construction,
// Start's order, Finalize), trace_file.cc (path, header, writer),
// activity_kinds.cc (settings, kinds on and off), activity_intake.cc (the
// buffer callbacks, devices, statistics), subscriber_callbacks.cc (module
// unloads, launch names, graph calls), detach.cc (the CUPTI side of
// cupti_attachment.h), production_link.cc (the ProductionController's
// callbacks), capture_link.cc (capture ranges' triggers), client_handover.cc
// (the program's own CUPTI client).
//
// Threads:
//  - Start(): once, from the initialising thread.
//  - OnBufferRequested/OnBufferCompleted: CUPTI's threads and any thread in
//    a CUDA call or in cuptiActivityFlushAll. They touch only the pool, the
//    processor, the stats and the AsyncWriter, each of which locks itself.
//  - Finalize(): any thread, any number of times; the first caller does the
//    work. It must not hold any cutrace lock when it calls
//    cuptiActivityFlushAll, because CUPTI calls OnBufferCompleted from
//    inside it on the same thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>

#include "collector/async_writer.h"
#include "collector/status.h"
#include "collector/string_interner.h"
#include "collector/trace_info.h"
#include "injection/records/activity_processor.h"
#include "injection/activity_stats.h"
#include "injection/buffer_pool.h"
#include "injection/config.h"
#include "injection/production/production_controller.h"
#include "injection/cupti/cupti_api.h"
#include "injection/records/launch_names.h"
#include "injection/session/client_handover.h"
#include "injection/session/cupti_attachment.h"

namespace cutrace::injection {

inline constexpr const char* kProducer = "cutrace-injection 0.1.0";

// cutrace's CUPTI timestamp callback: CLOCK_MONOTONIC ns (ClockDomain::kMonotonic).
uint64_t CUPTIAPI MonotonicTimestampCallback();

class Session {
 public:
  Session(Config config, EnvGetter env);
  // Tests only (production leaks its session): stops the writer thread.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Subscribes to CUPTI, creates the trace file, starts the writer and
  // enables the configured activity kinds. On error nothing is left
  // subscribed or running and the message says what and how to fix it.
  Status Start(std::unique_ptr<CuptiApi> api);

  // See the header comment. `reason` goes into the EndOfTrace packet.
  void Finalize(const char* reason);

  bool running() const { return state_.load(std::memory_order_acquire) == kRunning; }
  bool finished() const { return state_.load(std::memory_order_acquire) == kDone; }
  // Start() returned success: the process's end may finish this session
  // (lifecycle.cc). CUPTI's callbacks reach it earlier, while Start runs.
  bool started() const { return started_.load(std::memory_order_acquire); }
  const std::string& path() const { return path_; }
  pid_t pid() const { return pid_; }
  ActivityStats& stats() { return stats_; }
  const BufferPool* pool() const { return pool_.get(); }
  ClockDomain clock() const { return clock_; }
  // CUTRACE_FLIGHT_RECORDER is on: a crash signal then finishes the trace
  // and dumps the ring (lifecycle.h).
  bool has_flight_recorder() const;

  // The program's own CUPTI client is registering its activity buffer
  // callbacks (client_handover.cc): cutrace takes its buffers back and
  // stops recording activity. Any thread; the first call does the work.
  void YieldActivity() { handover_.Yield(handover_host_); }
  // That client turned its kernel records off and flushed: cutrace takes the
  // activity API back. Any thread; a no-op unless yielded.
  void ResumeActivity() { handover_.Resume(handover_host_); }
  // The program's client installed its own timestamp callback (while cutrace yields).
  void NoteProgramClock() { handover_.NoteProgramClock(); }
  bool yielded() const { return handover_.yielded(); }
  // Continuous mode asked CUPTI to detach at the next API exit (tests).
  bool detach_pending() const { return attach_.detach_pending(); }

  // The session CUPTI's callbacks reach (the one most recently started;
  // process_state.h).
  static Session* Active();

  // CUPTI's buffer callbacks (registered with cuptiActivityRegisterCallbacks).
  static void CUPTIAPI BufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI BufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                       size_t size, size_t valid_size);
  // The subscriber's callback: cuModuleUnload/cuLibraryUnload entries (a
  // forced flush, so records are converted while their kernel names are
  // valid: CUPTI may reuse an unloaded module's name memory), everything
  // else to the counters.
  static void CUPTIAPI SubscriberCallback(void* userdata, CUpti_CallbackDomain domain,
                                          CUpti_CallbackId cbid, const void* data);

 private:
  enum State : int { kIdle, kRunning, kFinalizing, kDone };

  // session.cc: the start order.
  Status Subscribe();
  // After counters started (or not): keeps the subscription where it serves,
  // releases it where it would lock the program's own CUPTI client out.
  void KeepOrReleaseSubscription(bool counting);

  // trace_file.cc.
  Status OpenTrace();
  // Appends `path` to CUTRACE_RUN_MANIFEST (cutrace run's list of traces).
  void WriteManifest(const std::string& path);
  ClockAnchorInfo Anchor();
  // Now on the trace's clock (CLOCK_MONOTONIC, or CUPTI's where it stays on it).
  int64_t TraceNow();

  // activity_kinds.cc.
  void ConfigureActivity();
  // The activity settings of the config (thread ids, per-thread buffers, flush
  // period, latency timestamps): at Start and after every re-attach.
  void ApplyActivitySettings();
  // How API records go on: kPerCall (only the traced calls) works only
  // before CUDA runs, i.e. at Start; every later switch is kWholeDomain
  // (activity_kinds.cc says why).
  enum class ApiSwitch { kPerCall, kWholeDomain };
  void EnableKinds(ApiSwitch api);
  // DEVICE and CONTEXT only: what describes the process, not its work.
  void EnableProcessKinds();
  void EnableApiRecords(bool runtime, ApiSwitch api);
  void EnableApiDomain(bool runtime);
  void DisableKinds(bool all);
  // Continuous mode's windows turn the kinds on and off (control thread).
  void SetActivity(bool on);
  // A forced flush of cutrace's own buffers; nothing once it has yielded or
  // while CUPTI is detached.
  CUptiResult FlushOwnBuffers();

  // activity_intake.cc (CUPTI's threads).
  void OnRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  void OnCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t valid_size);
  void PostDevices(const std::vector<DeviceInfo>& devices);
  // Totals for a Statistics packet; `writer` must belong to the calling thread.
  StatsInfo CollectStats(const TraceWriter& writer) const;

  // subscriber_callbacks.cc.
  // The callbacks cutrace keeps on its subscriber: module unloads, and
  // launches once a module was unloaded (launch_names.h).
  void EnableOwnCallbacks();
  // Turns these callbacks of cutrace's subscriber on; false if any failed.
  bool EnableApiCallbacks(std::span<const CUpti_CallbackId> runtime, std::span<const CUpti_CallbackId> driver);
  bool EnableLaunchCallbacks();
  bool EnableGraphCallbacks();
  void OnModuleUnload();
  // From then on, every launch's name from its API callback (launch_names.h).
  void CaptureLaunchNames();
  void OnLaunch(const CUpti_CallbackData* cb);

  // detach.cc: continuous mode between windows (CUTRACE_DETACH), the CUPTI
  // calls around attach_'s transitions (cupti_attachment.h).
  void DecideDetach(bool counting);
  // Detaching on: the graph calls' callbacks on, or detaching off without them.
  void WatchForGraphs();
  void OnGraphCall();   // any thread: a graph instantiated or launched
  // A module unload's flush is under way or stuck: no detach.
  bool DetachBlocked() const;
  void RequestDetach();
  // The API domains' callbacks off, cutrace's own callbacks back on.
  void DomainsOff();
  void DetachNow();     // an application thread, in the subscriber callback
  void DetachOrStay();  // DetachNow's work, once the request is taken
  // Waits (boundedly) for a detach under way, takes back one asked for and
  // not yet made; the state after. Caller holds attach_mu_.
  CuptiAttachment::State SettleDetach();
  bool Reattach();    // the control thread, before a window's kinds go on
  // Finalize: no detach from now on; true unless CUPTI is attached (then
  // there is nothing to flush, and no CUPTI call may be made).
  bool SettleAttachForExit();

  // production_link.cc (injection/production/production_controller.h).
  void StartProduction();

  // capture_link.cc: capture ranges (production/capture_range.h) — the
  // callbacks their trigger needs (profiler API or NVTX), and each call
  // turned into the range's event.
  bool capturing() const { return production_ != nullptr && production_->capturing(); }
  bool NeedsCaptureCallbacks() const;
  void StartCaptureCallbacks();
  void OnCaptureCallback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data);
  // The NVTX domain a handle stands for ("" the default, "?" unknown).
  std::string NvtxDomainName(const void* handle);

  // client_handover.cc: watches the program's objects for a CUPTI client of their own.
  void WatchForOtherClient();

  Config config_;
  EnvGetter env_;
  pid_t pid_ = 0;
  std::unique_ptr<CuptiApi> api_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  ClockDomain clock_ = ClockDomain::kCupti;
  uint32_t cupti_version_ = 0;
  std::string path_;

  ActivityStats stats_;
  StringInterner interner_;
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<ActivityProcessor> processor_;
  std::unique_ptr<AsyncWriter> writer_;
  std::unique_ptr<ProductionController> production_;  // null in plain trace mode

  std::atomic<int> state_{kIdle};
  std::atomic<bool> started_{false};
  std::atomic<uint64_t> writer_cpu_ns_{0};
  std::atomic<bool> pool_warning_posted_{false};
  // The program's own CUPTI client (client_handover.h), and what the
  // hand-over does to this session.
  ClientHandover handover_;
  struct HandoverHost final : ClientHandover::Host {
    explicit HandoverHost(Session& session) : s(session) {}
    bool HandoverLive() const override;
    CUptiResult FlushBeforeHandover() override;
    void AllKindsOff() override;
    CUptiResult RegisterBufferCallbacks() override;
    void KindsBackOn() override;
    void PostWarning(std::string text, std::optional<uint64_t> at) override;
    std::string ResultString(CUptiResult r) const override;
    CUpti_TimestampCallbackFunc OwnClock() const override;
    Session& s;
  } handover_host_{*this};
  bool cupti_clock_is_realtime_ = false;  // set at Start: CUPTI's default clock is in use
  // A flush before a module unload that did not return in time (see OnModuleUnload).
  static constexpr std::chrono::milliseconds kUnloadFlushWait{2000};
  std::atomic<bool> unload_flush_stuck_{false};
  LaunchNames launch_names_;  // active after the first module unload

  // CUPTI's attachment in continuous mode (session/cupti_attachment.h):
  // its state, whether detaching is on, and its counts.
  CuptiAttachment attach_;
  // The attachment's actions that are CUPTI calls of this session.
  struct AttachActions final : CuptiAttachment::Actions {
    explicit AttachActions(Session& s) : session(s) {}
    void CallbacksOff() override { session.DomainsOff(); }
    void ForgetSubscriber() override { session.subscriber_ = nullptr; }
    Session& session;
  } attach_actions_{*this};
  std::mutex attach_mu_;             // Reattach against SettleAttachForExit
  bool attach_final_ = false;        // guarded by attach_mu_: exiting, no re-attach
  bool window_kinds_on_ = true;          // control thread: this window enabled its kinds
  std::atomic<int> unloads_in_flight_{0};  // OnModuleUnload between its check and its flush's end

  // Capture ranges: the trigger's callbacks are on; NVTX domains by handle
  // (nvtxDomainCreate), for nvtx:NAME@DOMAIN.
  std::atomic<bool> capture_callbacks_{false};
  std::mutex nvtx_domains_mu_;
  std::map<const void*, std::string> nvtx_domains_;  // guarded by nvtx_domains_mu_

  std::mutex devices_mu_;
  std::set<uint32_t> devices_seen_;  // guarded by devices_mu_
};

}  // namespace cutrace::injection
