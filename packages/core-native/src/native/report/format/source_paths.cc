#include "report/format/source_paths.h"

#include <sys/stat.h>

#include <vector>

namespace mate {

namespace {

bool Exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

// `file` relative to `root` when strictly inside it (both absolute and normalized).
std::string Inside(const std::string& root, const std::string& file) {
  std::string rel;
  if (root == "/") {
    rel = file.substr(1);
  } else if (file.size() > root.size() + 1 && file.compare(0, root.size(), root) == 0 && file[root.size()] == '/') {
    rel = file.substr(root.size() + 1);
  }
  return rel.compare(0, 2, "..") == 0 ? "" : rel;
}

}  // namespace

std::string ResolvePath(const std::string& base, const std::string& p) {
  std::string joined = !p.empty() && p[0] == '/' ? p : base + "/" + p;
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= joined.size()) {
    size_t slash = joined.find('/', start);
    std::string part = joined.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  std::string out;
  for (const std::string& part : parts) out += "/" + part;
  return out.empty() ? "/" : out;
}

std::string RepoRoot(const std::string& from) {
  std::string start = ResolvePath("/", from);
  for (std::string dir = start;;) {
    if (Exists(dir + (dir == "/" ? "" : "/") + ".git")) return dir;
    if (dir == "/") return start;
    size_t slash = dir.rfind('/');
    dir = slash == 0 ? "/" : dir.substr(0, slash);
  }
}

std::string FileUri(const std::string& cwd, const std::string& p) {
  std::string path = ResolvePath(cwd, p);
  // pathToFileURL keeps a trailing separator.
  if (!p.empty() && p.back() == '/' && path != "/") path += '/';
  static const char hex[] = "0123456789ABCDEF";
  static const char kEncoded[] = " \"#%<>?[\\]^`{|}~";
  std::string out = "file://";
  for (unsigned char c : path) {
    bool encode = c < 0x21 || c >= 0x7f;
    for (const char* e = kEncoded; !encode && *e; e++) encode = c == static_cast<unsigned char>(*e);
    if (encode) {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string SourcePaths::Relative(const std::string& file, const RunPlace& run) const {
  std::string abs = ResolvePath(run.Known() ? run.cwd : here, file);
  std::string rel = run.Known() ? Inside(ResolvePath("/", run.root), abs) : "";
  if (rel.empty()) rel = Inside(ResolvePath("/", here), abs);
  return rel;
}

std::string SourcePaths::TestFile(const std::string& file, const RunPlace& run) const {
  std::string rel = Relative(file, run);
  if (rel.empty()) return "";
  return run.Known() || Exists(ResolvePath("/", here) + "/" + rel) ? rel : "";
}

}  // namespace mate
