// One owned file descriptor, closed when its owner goes, on every path out of a function
// (exceptions included). Closing also releases a flock(2) held through it.
//
// Example:
//   UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
//   if (!fd) throw ...;              // open failed: errno is as open(2) left it
//   ::read(fd.get(), ...);           // closed at the end of the scope, or when a throw leaves it
#pragma once

#include <unistd.h>

#include <utility>

namespace atlas2kudu {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  // Closes what it held, then holds fd.
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace atlas2kudu
