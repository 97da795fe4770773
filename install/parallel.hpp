#pragma once
// A bounded parallel loop for the installer's independent jobs (extracting cache entries,
// linking packages): no pool outlives the call, and the first failure is rethrown once every
// worker has stopped, so no thread still writes when the caller cleans up.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
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

// Workers that take items as a producer hands them over (each download extracted as soon as it
// has landed and been verified, while the others still stream in). put() from the producer,
// finish() waits for every item and rethrows the first failure; after a failure the workers
// skip what is still queued. The destructor stops and joins without throwing.
class FeedPool {
public:
    FeedPool(int threads, std::function<void(std::size_t)> work) : work_(std::move(work)) {
        for (int t = 0; t < std::max(1, threads); ++t) pool_.emplace_back([this] { run(); });
    }
    FeedPool(const FeedPool&) = delete;
    ~FeedPool() {
        close();
        for (auto& t : pool_)
            if (t.joinable()) t.join();
    }
    void put(std::size_t item) {
        {
            std::lock_guard g(m_);
            queue_.push_back(item);
        }
        cv_.notify_one();
    }
    void finish() {
        close();
        for (auto& t : pool_) t.join();
        if (first_) std::rethrow_exception(first_);
    }

private:
    void close() {
        {
            std::lock_guard g(m_);
            closed_ = true;
        }
        cv_.notify_all();
    }
    void run() {
        for (;;) {
            std::size_t item;
            {
                std::unique_lock l(m_);
                cv_.wait(l, [&] { return closed_ || !queue_.empty(); });
                if (queue_.empty()) return;
                item = queue_.front();
                queue_.pop_front();
                if (first_) continue;
            }
            try {
                work_(item);
            } catch (...) {
                std::lock_guard g(m_);
                if (!first_) first_ = std::current_exception();
            }
        }
    }
    std::function<void(std::size_t)> work_;
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<std::size_t> queue_;
    bool closed_ = false;
    std::exception_ptr first_;
    std::vector<std::thread> pool_;
};

}  // namespace envlock::install
