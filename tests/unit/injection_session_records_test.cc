// The session end to end without a GPU: the fake CUPTI drives the real
// buffer callbacks with synthetic records of every kind; the trace file the
// writer thread produces is read back with LoadTrace and checked field by
// field, statistics included.
#include <unistd.h>

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "collector/trace_loader.h"
#include "tests/unit/injection_session_fixture.h"

namespace cutrace::injection {
namespace {

TEST_F(InjectionSessionTest, EndToEndIntoTraceFile) {
  fake_->dropped_per_buffer = 2;
  Config config = MakeConfig();
  config.kinds.sync = true;  // every kind, sync records included
  ASSERT_TRUE(StartSession(config).ok());
  // Names live in a buffer the test frees before reading the trace back,
  // as CUPTI's do: nothing may point into it afterwards.
  auto names = std::make_unique<std::string[]>(3);
  names[0] = "_Z6vecAddPfS_S_i";
  names[1] = "_Z4tinyv";
  names[2] = "net";
  DeliverBuffer([&](BufferWriter& w) {
    auto dev = Zeroed<CUpti_ActivityDevice5>(CUPTI_ACTIVITY_KIND_DEVICE);
    dev.id = 0;
    dev.name = "NVIDIA H200";
    dev.numMultiprocessors = 132;
    w.Add(dev);
    auto ctx = Zeroed<CUpti_ActivityContext3>(CUPTI_ACTIVITY_KIND_CONTEXT);
    ctx.contextId = 1;
    ctx.deviceId = 0;
    w.Add(ctx);
    w.Add(Api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 90, 95, 10));
    w.Add(Kernel(names[0].c_str(), 100, 200, 10));
    w.Add(Kernel(names[0].c_str(), 210, 300, 11));
    w.Add(Kernel(names[1].c_str(), 310, 320, 12));
    w.Add(Kernel(names[1].c_str(), 0, 330, 13));    // no start time: rejected
    w.Add(Kernel(names[1].c_str(), 400, 350, 14));  // inverted: rejected
    w.Add(Kernel(names[1].c_str(), 0, 0, 15));      // not timed (a counted launch): untimed
    auto copy = Zeroed<CUpti_ActivityMemcpy6>(CUPTI_ACTIVITY_KIND_MEMCPY);
    copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    copy.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
    copy.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    copy.bytes = 4096;
    copy.start = 50;
    copy.end = 80;
    copy.streamId = 7;
    copy.contextId = 1;
    copy.correlationId = 9;
    w.Add(copy);
    auto peer = Zeroed<CUpti_ActivityMemcpyPtoP4>(CUPTI_ACTIVITY_KIND_MEMCPY2);
    peer.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    peer.bytes = 8192;
    peer.start = 400;
    peer.end = 450;
    peer.srcDeviceId = 0;
    peer.dstDeviceId = 1;
    w.Add(peer);
    auto set = Zeroed<CUpti_ActivityMemset4>(CUPTI_ACTIVITY_KIND_MEMSET);
    set.bytes = 64;
    set.value = 7;
    set.start = 500;
    set.end = 510;
    w.Add(set);
    w.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, 60, "forward", names[2].c_str()));
    auto color = Zeroed<CUpti_ActivityMarkerData2>(CUPTI_ACTIVITY_KIND_MARKER_DATA);
    color.id = 1;
    color.flags = CUPTI_ACTIVITY_FLAG_MARKER_COLOR_ARGB;
    color.color = 0xFF76B900u;
    w.Add(color);
    w.Add(Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, 600, nullptr, names[2].c_str()));
    auto sync = Zeroed<CUpti_ActivitySynchronization2>(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
    sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    sync.start = 520;
    sync.end = 590;
    sync.contextId = 1;
    sync.streamId = 7;
    sync.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    w.Add(sync);
    auto overhead = Zeroed<CUpti_ActivityOverhead3>(CUPTI_ACTIVITY_KIND_OVERHEAD);
    overhead.start = 1000;
    overhead.end = 1250;
    w.Add(overhead);
    w.Add(Zeroed<CUpti_ActivityCudaEvent2>(CUPTI_ACTIVITY_KIND_CUDA_EVENT));  // not ours: "other"
  });
  EXPECT_EQ(session_->pool()->available(), session_->pool()->capacity())
      << "the buffer goes back to the pool as soon as it is converted";
  names.reset();
  // CUPTI delivers what it still holds inside cuptiActivityFlushAll.
  fake_->on_flush = [&] {
    DeliverBuffer([](BufferWriter& w) { w.Add(Kernel("_Z5finalv", 700, 800, 20)); });
  };
  session_->Finalize("exit");
  EXPECT_EQ(fake_->flushes, 1);
  EXPECT_NE(fake_->IndexOf("cuptiActivityFlushAll:1"), -1) << "a forced flush";

  auto loaded = LoadTrace(session_->path());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const TraceData& t = loaded.value();
  EXPECT_TRUE(t.clean_shutdown());
  EXPECT_EQ(t.end->reason(), "exit");
  EXPECT_FALSE(t.read.truncated);
  EXPECT_EQ(t.header.producer(), kProducer);
  EXPECT_EQ(t.header.pid(), ::getpid());
  EXPECT_EQ(t.header.ppid(), ::getppid());
  EXPECT_EQ(t.header.cupti_api_version(), static_cast<uint32_t>(CUPTI_API_VERSION));
  EXPECT_EQ(t.header.cuda_driver_version(), 13000);
  EXPECT_EQ(t.header.clock(), proto::CLOCK_DOMAIN_MONOTONIC);
  EXPECT_GT(t.header.start_anchor().realtime_ns(), 0);
  EXPECT_EQ(t.header.start_anchor().trace_ns(), t.header.start_anchor().monotonic_ns());
  EXPECT_GE(t.end->end_anchor().monotonic_ns(), t.header.start_anchor().monotonic_ns());
  EXPECT_EQ(t.header.source_format(), "cupti");
  EXPECT_EQ(t.header.enabled_kinds_size(), 8);  // all of Kinds, sync included
  ASSERT_GT(t.header.command_line_size(), 0);

  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(t.devices[0].sm_count, 132u);

  const RecordBatch& r = t.records;
  ASSERT_EQ(r.kernels.size(), 4u);
  std::vector<std::string> kernel_names;
  for (const auto& k : r.kernels) kernel_names.emplace_back(t.strings.Raw(k.name_id));
  std::sort(kernel_names.begin(), kernel_names.end());
  EXPECT_EQ(kernel_names, (std::vector<std::string>{"_Z4tinyv", "_Z5finalv", "_Z6vecAddPfS_S_i",
                                                    "_Z6vecAddPfS_S_i"}));
  auto first = std::find_if(r.kernels.begin(), r.kernels.end(),
                            [](const KernelRecord& k) { return k.correlation_id == 10; });
  ASSERT_NE(first, r.kernels.end());
  EXPECT_EQ(first->start_ns, 100u);
  EXPECT_EQ(first->end_ns, 200u);
  EXPECT_EQ(first->stream_id, 7u);
  EXPECT_EQ(first->block[0], 128u);

  ASSERT_EQ(r.memcpys.size(), 2u);
  auto htod = std::find_if(r.memcpys.begin(), r.memcpys.end(),
                           [](const MemcpyRecord& m) { return m.copy_kind == CopyKind::kHtoD; });
  ASSERT_NE(htod, r.memcpys.end());
  EXPECT_TRUE(htod->pageable());
  EXPECT_EQ(htod->bytes, 4096u);
  auto ptop = std::find_if(r.memcpys.begin(), r.memcpys.end(),
                           [](const MemcpyRecord& m) { return m.copy_kind == CopyKind::kPtoP; });
  ASSERT_NE(ptop, r.memcpys.end());
  EXPECT_EQ(ptop->dst_device_id, 1u);
  ASSERT_EQ(r.memsets.size(), 1u);
  EXPECT_EQ(r.memsets[0].value, 7u);

  ASSERT_EQ(r.ranges.size(), 1u);
  EXPECT_EQ(t.strings.Raw(r.ranges[0].name_id), "forward");
  EXPECT_EQ(t.strings.Raw(r.ranges[0].domain_id), "net");
  EXPECT_EQ(r.ranges[0].color, 0xFF76B900u);
  EXPECT_EQ(r.ranges[0].start_ns, 60u);
  EXPECT_EQ(r.ranges[0].end_ns, 600u);
  EXPECT_EQ(r.ranges[0].thread_id, 4242u);

  ASSERT_EQ(r.api_calls.size(), 1u);
  EXPECT_EQ(t.strings.Raw(r.api_calls[0].name_id), "cudaLaunchKernel");
  EXPECT_EQ(r.api_calls[0].correlation_id, 10u);
  ASSERT_EQ(r.syncs.size(), 1u);
  EXPECT_EQ(r.syncs[0].kind, SyncKind::kStreamSynchronize);
  EXPECT_EQ(r.syncs[0].device_id, 0u);
  EXPECT_EQ(r.syncs[0].stream_id, 7u);

  ASSERT_TRUE(t.statistics.has_value());
  const StatsInfo& s = *t.statistics;
  EXPECT_EQ(s.kernels, 4u);
  EXPECT_EQ(s.memcpys, 2u);
  EXPECT_EQ(s.memsets, 1u);
  EXPECT_EQ(s.ranges, 1u);
  EXPECT_EQ(s.api_calls, 1u);
  EXPECT_EQ(s.syncs, 1u);
  EXPECT_EQ(s.other_records, 1u);
  EXPECT_EQ(s.kernels_untimed, 1u);
  // The fake reports 2 new drops per query: after each of 2 buffers and at shutdown.
  EXPECT_EQ(s.records_dropped_by_cupti, 6u);
  EXPECT_EQ(s.records_dropped_queue_full, 0u);
  EXPECT_EQ(s.buffers_requested, 2u);
  EXPECT_EQ(s.buffers_completed, 2u);
  EXPECT_EQ(s.buffers_refused, 0u);
  EXPECT_EQ(s.buffer_bytes, 4u << 20);
  EXPECT_EQ(s.cupti_overhead_ns, 250u);
  EXPECT_GT(s.bytes_written, 0u);
  EXPECT_GT(s.tool_cpu_ns, 0u);
  EXPECT_EQ(s.peak_memory_bytes, 1u << 20);
  std::map<std::string, uint64_t> invalid;
  for (const auto& i : s.invalid) invalid[i.kind + "/" + i.reason] = i.count;
  EXPECT_EQ(invalid, (std::map<std::string, uint64_t>{{"kernel/zero_timestamp", 1},
                                                      {"kernel/inverted", 1}}));
}

// After a module unload CUPTI's record names can be the unloaded module's
// (module_reload on the H200): from the first unload on, each launch's name
// comes from its API callback, by correlation id.
TEST_F(InjectionSessionTest, AfterAModuleUnloadNamesComeFromTheLaunch) {
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  CUpti_CallbackData cb{};
  cb.callbackSite = CUPTI_API_ENTER;
  cb.symbolName = "_Z6beforev";
  cb.correlationId = 1;  // before any unload: not taken
  Session::SubscriberCallback(nullptr, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cb);
  Session::SubscriberCallback(nullptr, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuModuleUnload, &cb);
  cb.symbolName = "_Z4realv";
  cb.correlationId = 2;
  Session::SubscriberCallback(nullptr, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &cb);
  cb.symbolName = "_Z7runtimev";
  cb.correlationId = 3;
  Session::SubscriberCallback(nullptr, CUPTI_CB_DOMAIN_RUNTIME_API,
                              CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &cb);
  DeliverBuffer([](BufferWriter& w) {
    w.Add(Kernel("_Z5stalev", 100, 200, 1));  // no launch name: CUPTI's
    w.Add(Kernel("_Z5stalev", 300, 400, 2));  // the launch's name wins
    w.Add(Kernel("_Z5stalev", 500, 600, 3));
    w.Add(Kernel("_Z5stalev", 700, 800, 4));  // never seen at launch: CUPTI's
  });
  session_->Finalize("exit");
  auto t = LoadTrace(session_->path());
  ASSERT_TRUE(t.ok()) << t.status().message();
  std::vector<std::string> names;
  for (const auto& k : t->records.kernels) names.emplace_back(t->strings.Raw(k.name_id));
  EXPECT_EQ(names, (std::vector<std::string>{"_Z5stalev", "_Z4realv", "_Z7runtimev", "_Z5stalev"}));
}

TEST_F(InjectionSessionTest, ApiDomainFallbackFiltersAtConversion) {
  fake_->has_per_api_enable = false;
  ASSERT_TRUE(StartSession(MakeConfig()).ok());
  EXPECT_EQ(std::count(fake_->enabled_kinds.begin(), fake_->enabled_kinds.end(),
                       CUPTI_ACTIVITY_KIND_RUNTIME), 1);
  EXPECT_EQ(std::count(fake_->enabled_kinds.begin(), fake_->enabled_kinds.end(),
                       CUPTI_ACTIVITY_KIND_DRIVER), 1);
  DeliverBuffer([](BufferWriter& w) {
    w.Add(Api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 1, 2, 1));
    w.Add(Api(CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, 3, 9, 2));
    w.Add(Api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice, 4, 5, 3));
    w.Add(Api(CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 6, 8, 4));
  });
  session_->Finalize("exit");
  auto t = LoadTrace(session_->path());
  ASSERT_TRUE(t.ok()) << t.status().message();
  std::vector<std::string> names;
  for (const auto& a : t->records.api_calls) names.emplace_back(t->strings.Raw(a.name_id));
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"cuLaunchKernel", "cudaMemcpy"}));
  EXPECT_EQ(t->statistics->api_calls, 2u);
}

}  // namespace
}  // namespace cutrace::injection
