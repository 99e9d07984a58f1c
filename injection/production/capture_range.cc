// CaptureRange (capture_range.h): the configuration and the state machine.
#include "injection/production/capture_range.h"

#include <charconv>

#include "injection/modes.h"
#include "injection/text.h"

namespace cutrace::injection {
namespace {

std::string Ms(uint64_t ns) {
  const uint64_t ms = ns / 1'000'000;
  return ms * 1'000'000 == ns ? std::to_string(ms) + "ms" : std::to_string(ns) + "ns";
}

std::string Thread(uint64_t tid) { return "thread " + std::to_string(tid); }

}  // namespace

std::string CaptureRangeConfig::Describe() const {
  std::string s;
  switch (trigger) {
    case Trigger::kProfilerApi: s = "cudaProfilerApi"; break;
    case Trigger::kNvtx:
      s = "nvtx:" + nvtx_name + (nvtx_domain.empty() ? "" : "@" + nvtx_domain);
      break;
    case Trigger::kNone: break;
  }
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : " ") + part; };
  if (delay_ns) add("delay " + Ms(delay_ns));
  if (duration_ns) add("duration " + Ms(duration_ns));
  return s;
}

CaptureRangeConfig ParseCaptureRangeConfig(const EnvGetter& env, std::vector<std::string>* problems) {
  CaptureRangeConfig c;
  if (auto text = env("CUTRACE_CAPTURE_RANGE"); text && !Trim(*text).empty()) {
    const std::string v(Trim(*text));
    if (v == "cudaProfilerApi") {
      c.trigger = CaptureRangeConfig::Trigger::kProfilerApi;
    } else if (v.rfind("nvtx:", 0) == 0 && v.size() > 5) {
      std::string rest = v.substr(5);
      const size_t at = rest.rfind('@');
      c.nvtx_name = at == std::string::npos ? rest : rest.substr(0, at);
      c.nvtx_domain = at == std::string::npos ? "" : rest.substr(at + 1);
      if (c.nvtx_name.empty() || (at != std::string::npos && c.nvtx_domain.empty())) {
        c.trigger = CaptureRangeConfig::Trigger::kNone;
      } else {
        c.trigger = CaptureRangeConfig::Trigger::kNvtx;
      }
    }
    if (c.trigger == CaptureRangeConfig::Trigger::kNone) {
      problems->push_back("CUTRACE_CAPTURE_RANGE=" + v +
                          ": must be cudaProfilerApi or nvtx:NAME[@DOMAIN]; recording everything");
      return {};
    }
  }
  if (auto text = env("CUTRACE_CAPTURE_RANGE_END"); text && !Trim(*text).empty()) {
    const std::string v(Trim(*text));
    bool ok = true;
    if (v == "stop") {
      c.max_ranges = 1;
    } else if (v == "repeat") {
      c.max_ranges = 0;
    } else if (v.rfind("repeat:", 0) == 0) {
      uint32_t n = 0;
      const char* first = v.data() + 7;
      const char* last = v.data() + v.size();
      auto [p, ec] = std::from_chars(first, last, n);
      ok = ec == std::errc() && p == last && n >= 1 && first != last;
      c.max_ranges = n;
    } else {
      ok = false;
    }
    if (!ok) {
      problems->push_back("CUTRACE_CAPTURE_RANGE_END=" + v +
                          ": must be stop, repeat or repeat:N (N >= 1); recording everything");
      return {};
    }
  }
  for (auto [name, field] : {std::pair{"CUTRACE_DELAY", &c.delay_ns}, std::pair{"CUTRACE_DURATION", &c.duration_ns}}) {
    auto text = env(name);
    if (!text || Trim(*text).empty()) continue;
    auto v = ParseDurationNs(*text);
    if (!v || (*v == 0 && field == &c.duration_ns)) {
      problems->push_back(std::string(name) + "=" + *text + ": must be a duration like 2s or 500ms" +
                          (field == &c.duration_ns ? " (not 0)" : "") + "; ignored");
      continue;
    }
    *field = *v;
  }
  return c;
}

CaptureRange::Action CaptureRange::Open(std::string reason) {
  open_ = true;
  ++opened_;
  Action a;
  a.kind = Action::Kind::kOpen;
  a.reason = std::move(reason);
  return a;
}

CaptureRange::Action CaptureRange::Close(std::string reason, bool by_program) {
  open_ = false;
  Action a;
  a.kind = Action::Kind::kClose;
  a.reason = std::move(reason);
  a.by_program = by_program;
  if (config_.max_ranges != 0 && opened_ >= config_.max_ranges) finished_ = true;
  if (config_.trigger == CaptureRangeConfig::Trigger::kNone) finished_ = true;
  a.finished = finished_;
  return a;
}

CaptureRange::Action CaptureRange::Start(int64_t now) {
  started_ = true;
  armed_ns_ = now + static_cast<int64_t>(config_.delay_ns);
  if (config_.duration_ns) end_ns_ = armed_ns_ + static_cast<int64_t>(config_.duration_ns);
  return OnTime(now);
}

CaptureRange::Action CaptureRange::OnTime(int64_t now) {
  if (!started_ || finished_) return {};
  if (now >= end_ns_) {
    const std::string why = "duration " + Ms(config_.duration_ns) + " elapsed";
    if (open_) {
      Action a = Close("capture-range: " + why, /*by_program=*/false);
      a.finished = finished_ = true;
      return a;
    }
    Action a;
    a.finished = finished_ = true;
    return a;
  }
  if (config_.trigger == CaptureRangeConfig::Trigger::kNone && !time_open_done_ && Armed(now)) {
    time_open_done_ = true;
    return Open(config_.delay_ns ? "capture-range: delay " + Ms(config_.delay_ns) + " elapsed"
                                 : "capture-range: start");
  }
  return {};
}

int64_t CaptureRange::NextDeadline() const {
  if (!started_ || finished_) return std::numeric_limits<int64_t>::max();
  if (config_.trigger == CaptureRangeConfig::Trigger::kNone && !time_open_done_) return armed_ns_;
  return end_ns_;
}

CaptureRange::Action CaptureRange::OnEvent(const Event& e, int64_t now) {
  using Kind = Event::Kind;
  // Depths are kept whatever the state, so a range that began before the
  // delay's end cannot be mistaken for an outermost one later.
  if (config_.trigger == CaptureRangeConfig::Trigger::kNvtx && (e.kind == Kind::kPush || e.kind == Kind::kPop) &&
      e.domain == config_.nvtx_domain) {
    size_t& depth = depth_[e.thread];
    if (e.kind == Kind::kPush) {
      const size_t before = depth++;
      if (!open_ && !finished_ && Armed(now) && Matches(e.name, e.domain)) {
        opener_is_push_ = true;
        opener_thread_ = e.thread;
        opener_depth_ = before;
        return Open("capture-range: nvtx push '" + config_.nvtx_name + "' on " + Thread(e.thread));
      }
      return {};
    }
    if (depth == 0) return {};  // pushed before cutrace started, or unmatched
    --depth;
    if (open_ && opener_is_push_ && e.thread == opener_thread_ && depth == opener_depth_) {
      return Close("capture-range: nvtx pop '" + config_.nvtx_name + "' on " + Thread(e.thread), true);
    }
    return {};
  }
  if (!started_ || finished_) return {};
  switch (e.kind) {
    case Kind::kProfilerStart:
      if (config_.trigger != CaptureRangeConfig::Trigger::kProfilerApi || open_ || !Armed(now)) return {};
      return Open("capture-range: cudaProfilerStart on " + Thread(e.thread));
    case Kind::kProfilerStop:
      if (config_.trigger != CaptureRangeConfig::Trigger::kProfilerApi || !open_) return {};
      return Close("capture-range: cudaProfilerStop on " + Thread(e.thread), true);
    case Kind::kStart:
      if (config_.trigger != CaptureRangeConfig::Trigger::kNvtx || open_ || !Armed(now) ||
          !Matches(e.name, e.domain)) {
        return {};
      }
      opener_is_push_ = false;
      opener_id_ = e.range_id;
      return Open("capture-range: nvtx start '" + config_.nvtx_name + "' on " + Thread(e.thread));
    case Kind::kEnd:
      if (!open_ || opener_is_push_ || e.range_id != opener_id_ || e.domain != config_.nvtx_domain) return {};
      return Close("capture-range: nvtx end '" + config_.nvtx_name + "' on " + Thread(e.thread), true);
    case Kind::kPush:
    case Kind::kPop:
      return {};
  }
  return {};
}

std::string CaptureRange::NeverOpened() const {
  const std::string what = config_.Describe();
  if (config_.trigger == CaptureRangeConfig::Trigger::kNone) {
    return "the program ended before the capture (" + what + ") began";
  }
  if (config_.trigger == CaptureRangeConfig::Trigger::kProfilerApi) {
    return "the program never called cudaProfilerStart/cuProfilerStart" +
           std::string(config_.delay_ns ? " after the delay" : "") + " (capture range " + what + ")";
  }
  return "the program never opened an NVTX range '" + config_.nvtx_name + "'" +
         (config_.nvtx_domain.empty() ? " in the default domain" : " in domain '" + config_.nvtx_domain + "'") +
         (config_.delay_ns ? " after the delay" : "") + " (capture range " + what +
         "; NVTX reaches cutrace through NVTX_INJECTION64_PATH, which cutrace run sets)";
}

}  // namespace cutrace::injection
