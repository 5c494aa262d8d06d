#include "report/format/event_origin_fields.h"

namespace mate {

FormatOptions WithOrigin(const FormatOptions& o, const JsonValue& e) {
  FormatOptions out = o;
  if (e["runtime"].IsString()) out.origin.runtime = e["runtime"].text;
  if (e["machineryDirs"].IsArray()) {
    out.origin.machinery_dirs.clear();
    for (const JsonValue& d : e["machineryDirs"].items) {
      if (d.IsString() && !d.text.empty()) out.origin.machinery_dirs.push_back(d.text);
    }
  }
  if (e["machineryPackages"].IsArray()) {
    out.origin.machinery_packages.clear();
    for (const JsonValue& d : e["machineryPackages"].items) {
      if (d.IsString() && !d.text.empty()) out.origin.machinery_packages.push_back(d.text);
    }
  }
  return out;
}

}  // namespace mate
