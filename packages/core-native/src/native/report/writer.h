#ifndef MATE_REPORT_WRITER_H_
#define MATE_REPORT_WRITER_H_

#include <cstddef>
#include <cstdint>

namespace mate {

// Appends text to a caller-owned buffer; never allocates, so the signal
// handler can use it. Output past the capacity is dropped, never overrun.
class Writer {
 public:
  Writer(char* buf, size_t cap) : buf_(buf), cap_(cap) {
    if (cap_) buf_[0] = '\0';
  }
  void Str(const char* s);
  void Mem(const char* s, size_t n);
  void Char(char c);
  void Dec(uint64_t v);
  void Hex(uint64_t v);
  void JsonStr(const char* s);  // quoted, escaped; null for nullptr
  const char* data() const { return buf_; }
  size_t size() const { return len_; }

 private:
  char* buf_;
  size_t cap_;
  size_t len_ = 0;
};

}  // namespace mate

#endif  // MATE_REPORT_WRITER_H_
