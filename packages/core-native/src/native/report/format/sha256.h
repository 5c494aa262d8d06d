#ifndef MATE_REPORT_FORMAT_SHA256_H_
#define MATE_REPORT_FORMAT_SHA256_H_

// SHA-256 (FIPS 180-4) of a byte string, as lowercase hex: the fingerprint's
// hash, the one Node's crypto gave it before, with no library to link.
#include <string>

namespace mate {

std::string Sha256Hex(const std::string& bytes);

}  // namespace mate

#endif  // MATE_REPORT_FORMAT_SHA256_H_
