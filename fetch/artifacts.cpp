#include "fetch/artifacts.hpp"

#include "fetch/url.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::fetch {

std::vector<Downloaded> download_artifacts(const std::vector<Artifact>& artifacts, const FetchContext& ctx) {
    // Offline means no network: a file a mirrors file maps to a local folder (file://, what
    // `envlock mirror` writes) is read; anything else is named and nothing is fetched.
    if (ctx.offline) {
        std::string missing;
        for (const auto& a : artifacts)
            if (!is_file_url(ctx.mirrors.apply(a.url))) missing += "\n  " + redact_url(a.url);
        if (!missing.empty())
            throw EnvironmentError("offline, and these files are not downloaded (nor in a local mirror):" + missing);
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
        // A local mirror folder without the file: the path, not an HTTP status it never sent.
        else if (!r.ok() && is_file_url(r.url)) failures.push_back("no such file in the mirror folder: " + file_url_path(r.url));
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
