#include "fetch/artifacts.hpp"

#include "fetch/url.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::fetch {

std::vector<Downloaded> download_artifacts(const std::vector<Artifact>& artifacts, const FetchContext& ctx) {
    if (ctx.offline && !artifacts.empty()) {
        std::string msg = "offline, and these files are not downloaded:";
        for (const auto& a : artifacts) msg += "\n  " + redact_url(a.url);
        throw EnvironmentError(msg);
    }
    std::vector<Request> requests;
    for (const auto& a : artifacts) {
        requests.push_back({ctx.mirrors.apply(a.url), {}, a.dest, a.sha256, a.md5});
        requests.back().expected_size = a.size;
    }
    auto responses = perform(requests, ctx.transport);
    std::vector<Downloaded> out;
    std::vector<std::string> failures;
    for (size_t i = 0; i < responses.size(); ++i) {
        const auto& r = responses[i];
        if (!r.error.empty()) failures.push_back(r.error);
        else if (!r.ok()) failures.push_back("cannot fetch " + redact_url(r.url) + ": HTTP " + std::to_string(r.status));
        else out.push_back({artifacts[i].url, r.sha256, r.size});
    }
    if (failures.size() == 1) throw EnvironmentError(failures.front());
    if (!failures.empty()) {
        std::string msg = std::to_string(failures.size()) + " downloads failed:";
        for (const auto& f : failures) msg += "\n  " + f;
        throw EnvironmentError(msg);
    }
    return out;
}

}  // namespace envlock::fetch
