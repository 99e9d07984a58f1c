// WriterHooks: how the production modes (injection/modes.h) take part in the
// AsyncWriter's writer thread without the writer knowing them: summary mode
// aggregates batches instead of writing them, the flight recorder keeps a
// copy of each batch in its ring, rotation and continuous windows finish the
// current file and start the next one between items.
//
// Threads: both methods run on the writer thread only (or on the thread
// that drains a never-started AsyncWriter), one item at a time, so a hook
// needs no lock for state only they touch.
#pragma once

#include <memory>

#include "collector/records.h"
#include "collector/string_interner.h"
#include "collector/trace_writer.h"

namespace cutrace {

class WriterHooks {
 public:
  virtual ~WriterHooks() = default;
  // A batch about to be written to `writer`. Returns true if the hook took
  // it (then it is not written); it may modify or move from `batch`.
  virtual bool OnBatch(RecordBatch& batch, TraceWriter& writer, StringInterner& interner) = 0;
  // After every item (batch or Post()ed function). May finish *writer and
  // replace it with the next chunk's writer; *writer must stay non-null (a
  // closed TraceWriter is fine: writes to it are refused).
  virtual void AfterItem(std::unique_ptr<TraceWriter>* writer, StringInterner& interner) = 0;
};

}  // namespace cutrace
