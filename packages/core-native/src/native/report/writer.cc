#include "report/writer.h"

#include <cstring>

namespace mate {

void Writer::Mem(const char* s, size_t n) {
  if (cap_ == 0) return;
  for (size_t i = 0; i < n && len_ + 1 < cap_; i++) buf_[len_++] = s[i];
  buf_[len_] = '\0';
}

void Writer::Str(const char* s) {
  if (s) Mem(s, strlen(s));
}

void Writer::Char(char c) { Mem(&c, 1); }

void Writer::Dec(uint64_t v) {
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) Char(tmp[--n]);
}

void Writer::Hex(uint64_t v) {
  char tmp[18];
  int n = 0;
  do {
    tmp[n++] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v);
  Str("0x");
  while (n) Char(tmp[--n]);
}

void Writer::JsonStr(const char* s) {
  if (s == nullptr) {
    Str("null");
    return;
  }
  Char('"');
  for (; *s; s++) {
    unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\') {
      Char('\\');
      Char(static_cast<char>(c));
    } else if (c == '\n') Str("\\n");
    else if (c == '\t') Str("\\t");
    else if (c == '\r') Str("\\r");
    else if (c < 0x20) {
      Str("\\u00");
      Char("0123456789abcdef"[c >> 4]);
      Char("0123456789abcdef"[c & 15]);
    } else Char(static_cast<char>(c));
  }
  Char('"');
}

}  // namespace mate
