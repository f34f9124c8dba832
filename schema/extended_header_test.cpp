#include <executorch/schema/extended_header.h>

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

using executorch::runtime::Error;
using executorch::runtime::ExtendedHeader;

namespace {

void put_le(std::vector<uint8_t>& bytes, size_t at, uint64_t value, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    bytes[at + i] = static_cast<uint8_t>(value >> (8 * i));
  }
}

// A file head: 8 bytes of root offset and identifier, then the header.
std::vector<uint8_t> head(uint32_t length,
                          uint64_t program_size,
                          uint64_t segment_base_offset,
                          uint64_t segment_data_size) {
  std::vector<uint8_t> bytes(64, 0);
  std::memcpy(bytes.data() + 4, "ET12", 4);
  std::memcpy(bytes.data() + 8, "eh00", 4);
  put_le(bytes, 12, length, 4);
  put_le(bytes, 16, program_size, 8);
  put_le(bytes, 24, segment_base_offset, 8);
  put_le(bytes, 32, segment_data_size, 8);
  return bytes;
}

TEST(ExtendedHeaderTest, ParsesAllFields) {
  auto bytes = head(32, 0x1000, 0x1010, 0x2345);
  auto header = ExtendedHeader::Parse(bytes.data(), bytes.size());
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->program_size, 0x1000u);
  EXPECT_EQ(header->segment_base_offset, 0x1010u);
  EXPECT_EQ(header->segment_data_size, 0x2345u);
}

TEST(ExtendedHeaderTest, ShortHeaderHasNoSegmentDataSize) {
  auto bytes = head(24, 0x100, 0x100, 0x999);
  auto header = ExtendedHeader::Parse(bytes.data(), bytes.size());
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->segment_data_size, 0u);
}

TEST(ExtendedHeaderTest, MissingMagicIsNotFound) {
  auto bytes = head(32, 0x100, 0, 0);
  bytes[8] = 'x';
  EXPECT_EQ(ExtendedHeader::Parse(bytes.data(), bytes.size()).error(),
            Error::NotFound);
  EXPECT_EQ(ExtendedHeader::Parse(bytes.data(), 10).error(), Error::NotFound);
  EXPECT_EQ(ExtendedHeader::Parse(nullptr, 0).error(), Error::NotFound);
}

TEST(ExtendedHeaderTest, TruncatedHeaderIsInvalid) {
  auto bytes = head(32, 0x100, 0, 0);
  EXPECT_EQ(ExtendedHeader::Parse(bytes.data(), 20).error(),
            Error::InvalidProgram);
  // The length claims more bytes than were provided.
  EXPECT_EQ(ExtendedHeader::Parse(bytes.data(), 36).error(),
            Error::InvalidProgram);
}

TEST(ExtendedHeaderTest, BadLengthIsInvalid) {
  auto bytes = head(16, 0x100, 0, 0);
  EXPECT_EQ(ExtendedHeader::Parse(bytes.data(), bytes.size()).error(),
            Error::InvalidProgram);
}

TEST(ExtendedHeaderTest, InconsistentSizesAreInvalid) {
  // program_size smaller than the header it contains.
  auto tiny = head(32, 8, 0, 0);
  EXPECT_EQ(ExtendedHeader::Parse(tiny.data(), tiny.size()).error(),
            Error::InvalidProgram);
  // Segments starting inside the program data.
  auto overlap = head(32, 0x200, 0x100, 0x10);
  EXPECT_EQ(ExtendedHeader::Parse(overlap.data(), overlap.size()).error(),
            Error::InvalidProgram);
}

} // namespace
