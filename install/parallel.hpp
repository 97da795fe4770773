#pragma once
// A bounded parallel loop for the installer's independent jobs (extracting cache entries,
// linking packages): no pool outlives the call, and the first failure is rethrown once every
// worker has stopped, so no thread still writes when the caller cleans up.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace envlock::install {

// Runs work(i) for every i < n on up to `threads` threads (the caller's among them). After a
// failure the workers take no new items.
template <class F>
void parallel_for(std::size_t n, int threads, F&& work) {
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr first;
    std::mutex m;
    auto run = [&] {
        for (std::size_t i; !failed && (i = next++) < n;) {
            try {
                work(i);
            } catch (...) {
                std::lock_guard g(m);
                if (!first) first = std::current_exception();
                failed = true;
            }
        }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < std::min<int>(threads, static_cast<int>(n)); ++t) pool.emplace_back(run);
    run();
    for (auto& t : pool) t.join();
    if (first) std::rethrow_exception(first);
}

}  // namespace envlock::install
