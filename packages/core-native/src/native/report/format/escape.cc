#include "report/format/escape.h"

#include <stdint.h>
#include <stdio.h>

namespace mate {

namespace {

// The length of the UTF-8 sequence at s[i] and its code point; 0 when the bytes are not UTF-8.
size_t Utf8At(const std::string& s, size_t i, uint32_t* cp) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if ((c & 0xE0) == 0xC0 && c >= 0xC2) {
    n = 2, *cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, *cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0 && c <= 0xF4) {
    n = 4, *cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; k++) {
    const unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) return 0;
    *cp = (*cp << 6) | (d & 0x3F);
  }
  // Overlong forms and surrogates are not UTF-8.
  if ((n == 3 && *cp < 0x800) || (n == 4 && (*cp < 0x10000 || *cp > 0x10FFFF)) || (*cp >= 0xD800 && *cp < 0xE000))
    return 0;
  return n;
}

// Code points that move the cursor, end a line or reorder text.
bool Invisible(uint32_t cp) {
  return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0) || cp == 0x2028 || cp == 0x2029 ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200E || cp == 0x200F;
}

std::string Hex(const char* format, uint32_t v) {
  char buf[16];
  snprintf(buf, sizeof(buf), format, v);
  return buf;
}

std::string Visible(const std::string& s, bool keep_lines) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    uint32_t cp;
    size_t n = Utf8At(s, i, &cp);
    if (n == 0) {
      out += Hex("\\x%02x", static_cast<unsigned char>(s[i]));
      i++;
      continue;
    }
    if (!Invisible(cp) || (keep_lines && (cp == '\n' || cp == '\t'))) {
      out.append(s, i, n);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x80) {
      out += Hex("\\x%02x", cp);
    } else {
      out += Hex("\\u%04x", cp);
    }
    i += n;
  }
  return out;
}

}  // namespace

std::string VisibleText(const std::string& s) { return Visible(s, false); }

std::string VisibleLines(const std::string& s) { return Visible(s, true); }

std::string JsonEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (size_t i = 0; i < s.size();) {
    uint32_t cp;
    size_t n = Utf8At(s, i, &cp);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      i++;
      continue;
    }
    switch (cp) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (cp < 0x20 || cp == 0x2028 || cp == 0x2029) out += Hex("\\u%04x", cp);
        else out.append(s, i, n);
    }
    i += n;
  }
  return out;
}

std::string JsonQuote(const std::string& s) { return "\"" + JsonEscape(s) + "\""; }

std::string GithubMessage(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

std::string GithubProperty(const std::string& s) {
  std::string out;
  for (char c : GithubMessage(s)) {
    if (c == ':') out += "%3A";
    else if (c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

}  // namespace mate
