// Checks the generated collector/wire_fields.h (proto/gen_wire_fields.py,
// run by the build) against protoc's reading of proto/cutrace.proto: every
// constant equals the field's number in the descriptor, and every field of
// every message has exactly one constant, so the generator can neither
// misread a number nor miss a field.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>

#include "collector/wire_fields.h"
#include "proto/cutrace.pb.h"

namespace cutrace {
namespace {

// A few constants by name, at compile time: the names the writer uses are
// the ones the generator makes (message::kCamelCaseField).
static_assert(wire::Trace::kPacket == proto::Trace::kPacketFieldNumber);
static_assert(wire::TracePacket::kEvents == proto::TracePacket::kEventsFieldNumber);
static_assert(wire::Header::kClockAnchorSource == proto::Header::kClockAnchorSourceFieldNumber);
static_assert(wire::Device::kMaxSharedMemoryPerSmBytes ==
              proto::Device::kMaxSharedMemoryPerSmBytesFieldNumber);
static_assert(wire::KernelSummary::kM2Ns2 == proto::KernelSummary::kM2Ns2FieldNumber);
static_assert(wire::EventBatch::kSyncs == proto::EventBatch::kSyncsFieldNumber);

const google::protobuf::FileDescriptor* Schema() {
  return proto::Trace::descriptor()->file();
}

TEST(WireFields, EveryConstantMatchesTheSchema) {
  for (const wire::SchemaField& row : wire::kSchemaFields) {
    const google::protobuf::Descriptor* message = Schema()->FindMessageTypeByName(row.message);
    ASSERT_NE(message, nullptr) << row.message;
    const google::protobuf::FieldDescriptor* field = message->FindFieldByName(row.field);
    ASSERT_NE(field, nullptr) << row.message << "." << row.field;
    EXPECT_EQ(static_cast<uint32_t>(field->number()), row.number)
        << row.message << "." << row.field;
  }
}

TEST(WireFields, EveryFieldOfTheSchemaHasOneConstant) {
  std::set<std::pair<std::string, std::string>> generated;
  for (const wire::SchemaField& row : wire::kSchemaFields)
    EXPECT_TRUE(generated.insert({row.message, row.field}).second)
        << row.message << "." << row.field << " twice";
  ASSERT_GT(Schema()->message_type_count(), 20);
  size_t fields = 0;
  for (int m = 0; m < Schema()->message_type_count(); ++m) {
    const google::protobuf::Descriptor* message = Schema()->message_type(m);
    EXPECT_EQ(message->nested_type_count(), 0) << message->name() << ": the generator is flat";
    for (int f = 0; f < message->field_count(); ++f) {
      const google::protobuf::FieldDescriptor* field = message->field(f);
      fields += 1;
      EXPECT_TRUE(generated.count({message->name(), field->name()}))
          << message->name() << "." << field->name() << " has no constant in wire_fields.h";
    }
  }
  EXPECT_EQ(generated.size(), fields);
}

}  // namespace
}  // namespace cutrace
