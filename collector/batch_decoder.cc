// See batch_decoder.h.
#include "collector/batch_decoder.h"

#include <string_view>

#include "collector/wire_fields.h"

namespace cutrace {

namespace {

// The kinds' words in problems, by EventBatch field (kKernels ... kSyncs).
constexpr std::string_view kKindWords[] = {"kernel", "memcpy", "memset", "range", "api", "sync"};

// Checks every *Columns message of the batch against the 0/1/count rule
// (start_delta_ns: exactly `count`), column by column in field order, through
// the descriptor; on failure names the first bad column in *problem.
bool Validate(const proto::EventBatch& b, std::string* problem) {
  const google::protobuf::Reflection& batch = *b.GetReflection();
  for (uint32_t k = wire::EventBatch::kKernels; k <= wire::EventBatch::kSyncs; ++k) {
    const google::protobuf::FieldDescriptor* kind = b.GetDescriptor()->FindFieldByNumber(k);
    if (!batch.HasField(b, kind)) continue;
    const google::protobuf::Message& columns = batch.GetMessage(b, kind);
    const google::protobuf::Descriptor& shape = *columns.GetDescriptor();
    const google::protobuf::Reflection& reflection = *columns.GetReflection();
    // Field 1 of every *Columns message is its uint32 `count`.
    const uint64_t count = reflection.GetUInt32(columns, shape.FindFieldByNumber(1));
    for (int i = 0; i < shape.field_count(); ++i) {
      const google::protobuf::FieldDescriptor* column = shape.field(i);
      if (!column->is_repeated()) continue;
      const uint64_t n = static_cast<uint64_t>(reflection.FieldSize(columns, column));
      const bool starts = column->number() == 2;  // start_delta_ns
      if (n == count || (!starts && n <= 1)) continue;
      *problem = std::string(kKindWords[k - wire::EventBatch::kKernels]) + " column " +
                 std::string(column->name()) + " has " + std::to_string(n) + " values for " +
                 std::to_string(count) + " events";
      return false;
    }
  }
  return true;
}

}  // namespace

void BatchDecoder::AddShape(const proto::KernelShape& shape) {
  KernelShape f;
  f.name_id = shape.name_id();
  f.grid[0] = shape.grid_x();
  f.grid[1] = shape.grid_y();
  f.grid[2] = shape.grid_z();
  f.block[0] = shape.block_x();
  f.block[1] = shape.block_y();
  f.block[2] = shape.block_z();
  f.registers_per_thread = shape.registers_per_thread();
  f.static_shared_bytes = shape.static_shared_bytes();
  f.dynamic_shared_bytes = shape.dynamic_shared_bytes();
  f.local_bytes_per_thread = shape.local_bytes_per_thread();
  f.shared_memory_config_bytes = shape.shared_memory_config_bytes();
  f.launch_type = static_cast<uint8_t>(shape.launch_type());
  shapes_.Set(shape.id(), f);
}

bool BatchDecoder::Decode(const proto::EventBatch& b, RecordBatch* out, std::string* problem) {
  if (!Validate(b, problem)) return false;
  // Serialized again, the batch is in the form the wire decoder reads:
  // packed columns, each field once, in field order. Unknown fields ride
  // along (their bytes count in kind_bytes, as libprotobuf's sizes do),
  // unless one is a group, which the wire decoder does not skip.
  if (DecodeEventBatchWire(b.SerializeAsString(), shapes_, out, &counts_) == WireDecode::kOk)
    return true;
  proto::EventBatch known(b);
  known.DiscardUnknownFields();
  if (DecodeEventBatchWire(known.SerializeAsString(), shapes_, out, &counts_) == WireDecode::kOk)
    return true;
  *problem = "an event batch that cannot be decoded";
  return false;
}

}  // namespace cutrace
