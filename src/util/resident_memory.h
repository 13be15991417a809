// Keeping the pages the allocator holds for reuse, under a ceiling on resident memory.
//
// A window frees what the next one mostly allocates again: its events, rows and statements. If
// the allocator gives those pages back to the kernel, the next window faults them in again, and
// a page fault is dear on some machines: on a 2-core virtual machine (bench/RESULTS.md, issue 10
// part nine) `compile` of 1 GiB took 23.1 s of CPU when jemalloc returned pages unused for 2 s
// and 15.1 s when it kept them (user 19.9 -> 12.6 s, system 3.2 -> 2.5 s; 98,700 -> 49,800 page
// faults for the first 300 MB). Kept pages stay resident, though, and what a window frees is not
// always what the next one can use (a string that grew in steps, a vector of another size): kept
// for good, they took compile's peak at 4 GiB to 260 MiB, over the default budget. So
// the executable keeps them (main.cpp: jemalloc's `dirty_decay_ms:-1`) and the pipeline asks,
// every few hundred events and after each window, whether the process's resident memory has
// passed the ceiling the budget sets; if it has, every unused page goes back at once.
//
//   set_unused_memory_release(&release_unused_pages);  // main(): jemalloc's purge
//   set_resident_memory_ceiling(resident_ceiling_for_budget(budget));  // the command
//   for (...) { read an event; keep_resident_memory_under_ceiling(); }
//   // RSS 221 MiB, ceiling 224 MiB: nothing happens (one pread of /proc/self/statm per 256 calls)
//   // RSS 225 MiB: the release runs; RSS falls to what is in use
//
// Without a release function (tests, builds with another allocator) or a ceiling, the check does
// nothing. Safe to call from the reading thread and the folding thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace atlas2kudu {

// What returns the allocator's unused pages to the kernel. Set once, before any thread starts.
void set_unused_memory_release(void (*release)());
// The resident memory (bytes) above which unused pages go back; 0 for no ceiling.
void set_resident_memory_ceiling(std::size_t bytes);
// The ceiling --memory-budget sets: an eighth below it, for what a window can add between two
// checks (its statements are built after its last event is read). With a sixteenth,
// `--memory-budget 64M` of 300 MB peaked at 65.3 MiB; with an eighth, at 61.3 MiB.
inline std::size_t resident_ceiling_for_budget(std::size_t budget) {
  return budget - budget / 8;
}

// Looks at the resident memory on every kResidentCheckInterval-th call (and on every call with
// `now`); releases the unused pages when it is above the ceiling.
inline constexpr std::uint32_t kResidentCheckInterval = 256;
void keep_resident_memory_under_ceiling(bool now = false);

// The process's resident memory in bytes (/proc/self/statm), nullopt if it cannot be read.
std::optional<std::size_t> resident_memory_bytes();

// Whether the process may have transparent huge pages, on hosts that give them to every process
// (THP "always"; Debian's default, "madvise", gives none to jemalloc's heap). A huge page saves
// 511 page faults of 512, but each release of unused pages splits the huge pages it touches, and
// the heap faults them in again: with a small budget, releases come every window or more often.
// With `--memory-budget 64M` of 1 GiB and jemalloc's heap on huge pages, compile took 21.5 s of
// CPU instead of 14.9 and peaked at 70 MB, over its budget (bench/RESULTS.md, issue 10 part
// twenty-six). main() turns them off before anything is allocated that matters; a command with a
// budget large enough turns them on again. (A password command the run starts inherits the
// setting: no matter for a short-lived process.) False if the kernel refused (no THP support, or
// a sandbox that filters prctl).
bool allow_transparent_huge_pages(bool allow);
// For main(): turns them off until a command allows them, and remembers whether the process
// started with them off (a parent's choice, inherited): allow_transparent_huge_pages(true) then
// leaves them off.
void defer_transparent_huge_pages();
// Whether they are allowed now (the host's setting still decides whether any are used).
bool transparent_huge_pages_allowed();

// How many times the unused pages were released in this process (for --stats and tests).
std::uint64_t unused_memory_releases();

}  // namespace atlas2kudu
