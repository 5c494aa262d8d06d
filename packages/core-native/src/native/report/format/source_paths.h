#ifndef MATE_REPORT_FORMAT_SOURCE_PATHS_H_
#define MATE_REPORT_FORMAT_SOURCE_PATHS_H_

// Source paths as CI tools take them: relative to the repository, with
// forward slashes (a SARIF location under %SRCROOT%, a workflow
// annotation's file=). A run's reports may be read in another checkout (a
// CI artifact merged by a later job): a path under the root the run
// recorded is taken relative to that root first.
#include <string>

namespace mate {

// Where a run ran, as its run.json recorded it (empty: not recorded).
struct RunPlace {
  std::string cwd;
  std::string root;
  bool Known() const { return !cwd.empty() && !root.empty(); }
};

// `p` made absolute against `base` and normalized (`.`, `..`, `//`), as Node's path.resolve.
std::string ResolvePath(const std::string& base, const std::string& p);
// The repository `from` is in: the nearest directory up holding a `.git` (a folder, or a worktree's file); `from` when
// none.
std::string RepoRoot(const std::string& from);
// The file: URI of a path (resolved against `cwd`), encoded as Node's pathToFileURL encodes it.
std::string FileUri(const std::string& cwd, const std::string& p);

struct SourcePaths {
  std::string here;  // the reader's repository
  // `file` relative to the repository, or "" outside it: a relative `file` is taken from the run's working
  // directory; absolute ones are tried under the run's root, then here.
  std::string Relative(const std::string& file, const RunPlace& run) const;
  // A test's file (relative to the run's working directory) relative to the repository; a run that did not
  // record where it ran must have its file here to be named.
  std::string TestFile(const std::string& file, const RunPlace& run) const;
};

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_SOURCE_PATHS_H_
