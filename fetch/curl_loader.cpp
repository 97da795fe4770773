// libcurl opened on first use instead of at start-up. Debian's libcurl brings 33 shared
// libraries, among them GnuTLS (through librtmp and libldap), whose constructor initialises
// the library at load: measured with perf stat, an empty program linked against libcurl
// starts in 5.9 ms of CPU against 0.5 ms, half of `envlock --version`. Most commands
// (check, why, spec, inspect, a re-resolve whose indexes are unchanged) transfer nothing.
//
// These definitions stand in for the libcurl functions envlock calls: the first call dlopens
// libcurl.so.4 and each function is looked up once. The setopt functions are variadic; their
// one argument is read by the option's type, which libcurl encodes in the option number
// (CURLOPTTYPE_* in curl.h), as libcurl itself reads it.
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

#include <cstdarg>
#include <string>

#include "fetch/lazy_library.hpp"

namespace {

envlock::fetch::LazyLibrary& library() {
    static envlock::fetch::LazyLibrary lib("libcurl.so.4", "libcurl", "every download", "libcurl4");
    return lib;
}


// One function pointer per name, looked up on first use.
#define ENVLOCK_CURL_FN(ret, name, params)                             \
    using name##_t = ret(*) params;                                    \
    name##_t name##_fn() {                                             \
        static const name##_t f = library().function<name##_t>(#name); \
        return f;                                                      \
    }

ENVLOCK_CURL_FN(CURLcode, curl_global_init, (long))
ENVLOCK_CURL_FN(CURL*, curl_easy_init, ())
ENVLOCK_CURL_FN(void, curl_easy_cleanup, (CURL*))
ENVLOCK_CURL_FN(void, curl_easy_reset, (CURL*))
ENVLOCK_CURL_FN(const char*, curl_easy_strerror, (CURLcode))
ENVLOCK_CURL_FN(CURLcode, curl_easy_setopt, (CURL*, CURLoption, ...))
ENVLOCK_CURL_FN(CURLcode, curl_easy_getinfo, (CURL*, CURLINFO, ...))
ENVLOCK_CURL_FN(void, curl_free, (void*))
ENVLOCK_CURL_FN(curl_slist*, curl_slist_append, (curl_slist*, const char*))
ENVLOCK_CURL_FN(void, curl_slist_free_all, (curl_slist*))
ENVLOCK_CURL_FN(CURLM*, curl_multi_init, ())
ENVLOCK_CURL_FN(CURLMcode, curl_multi_cleanup, (CURLM*))
ENVLOCK_CURL_FN(CURLMcode, curl_multi_add_handle, (CURLM*, CURL*))
ENVLOCK_CURL_FN(CURLMcode, curl_multi_remove_handle, (CURLM*, CURL*))
ENVLOCK_CURL_FN(CURLMcode, curl_multi_perform, (CURLM*, int*))
ENVLOCK_CURL_FN(CURLMcode, curl_multi_poll, (CURLM*, curl_waitfd*, unsigned int, int, int*))
ENVLOCK_CURL_FN(CURLMsg*, curl_multi_info_read, (CURLM*, int*))
ENVLOCK_CURL_FN(CURLMcode, curl_multi_wakeup, (CURLM*))
ENVLOCK_CURL_FN(CURLMcode, curl_multi_setopt, (CURLM*, CURLMoption, ...))
ENVLOCK_CURL_FN(CURLSH*, curl_share_init, ())
ENVLOCK_CURL_FN(CURLSHcode, curl_share_cleanup, (CURLSH*))
ENVLOCK_CURL_FN(CURLSHcode, curl_share_setopt, (CURLSH*, CURLSHoption, ...))
ENVLOCK_CURL_FN(CURLU*, curl_url, ())
ENVLOCK_CURL_FN(void, curl_url_cleanup, (CURLU*))
ENVLOCK_CURL_FN(CURLUcode, curl_url_set, (CURLU*, CURLUPart, const char*, unsigned int))
ENVLOCK_CURL_FN(CURLUcode, curl_url_get, (CURLU*, CURLUPart, char**, unsigned int))

#undef ENVLOCK_CURL_FN

// Forwards a setopt's one argument as the type the option number says (curl.h CURLOPTTYPE_*;
// the multi options use the same ranges).
template <class Fn, class Handle, class Option>
auto forward_option(Fn fn, Handle h, Option option, va_list ap) {
    const long kind = static_cast<long>(option) / 10000 * 10000;
    if (kind == CURLOPTTYPE_LONG) return fn(h, option, va_arg(ap, long));
    if (kind == CURLOPTTYPE_FUNCTIONPOINT) return fn(h, option, va_arg(ap, void (*)()));
    if (kind == CURLOPTTYPE_OFF_T) return fn(h, option, va_arg(ap, curl_off_t));
    return fn(h, option, va_arg(ap, void*));   // OBJECTPOINT, STRINGPOINT, SLISTPOINT, CBPOINT, BLOB
}

}  // namespace

extern "C" {

CURLcode curl_global_init(long flags) { return curl_global_init_fn()(flags); }
CURL* curl_easy_init() { return curl_easy_init_fn()(); }
void curl_easy_cleanup(CURL* h) { curl_easy_cleanup_fn()(h); }
void curl_easy_reset(CURL* h) { curl_easy_reset_fn()(h); }
const char* curl_easy_strerror(CURLcode c) { return curl_easy_strerror_fn()(c); }
void curl_free(void* p) { curl_free_fn()(p); }
curl_slist* curl_slist_append(curl_slist* l, const char* s) { return curl_slist_append_fn()(l, s); }
void curl_slist_free_all(curl_slist* l) { curl_slist_free_all_fn()(l); }
CURLM* curl_multi_init() { return curl_multi_init_fn()(); }
CURLMcode curl_multi_cleanup(CURLM* m) { return curl_multi_cleanup_fn()(m); }
CURLMcode curl_multi_add_handle(CURLM* m, CURL* e) { return curl_multi_add_handle_fn()(m, e); }
CURLMcode curl_multi_remove_handle(CURLM* m, CURL* e) { return curl_multi_remove_handle_fn()(m, e); }
CURLMcode curl_multi_perform(CURLM* m, int* running) { return curl_multi_perform_fn()(m, running); }
CURLMcode curl_multi_poll(CURLM* m, curl_waitfd* fds, unsigned int n, int timeout_ms, int* ret) {
    return curl_multi_poll_fn()(m, fds, n, timeout_ms, ret);
}
CURLMsg* curl_multi_info_read(CURLM* m, int* left) { return curl_multi_info_read_fn()(m, left); }
CURLMcode curl_multi_wakeup(CURLM* m) { return curl_multi_wakeup_fn()(m); }
CURLSH* curl_share_init() { return curl_share_init_fn()(); }
CURLSHcode curl_share_cleanup(CURLSH* s) { return curl_share_cleanup_fn()(s); }
CURLU* curl_url() { return curl_url_fn()(); }
void curl_url_cleanup(CURLU* u) { curl_url_cleanup_fn()(u); }
CURLUcode curl_url_set(CURLU* u, CURLUPart part, const char* content, unsigned int flags) {
    return curl_url_set_fn()(u, part, content, flags);
}
CURLUcode curl_url_get(CURLU* u, CURLUPart part, char** out, unsigned int flags) {
    return curl_url_get_fn()(u, part, out, flags);
}

CURLcode curl_easy_setopt(CURL* h, CURLoption option, ...) {
    va_list ap;
    va_start(ap, option);
    CURLcode rc = forward_option(curl_easy_setopt_fn(), h, option, ap);
    va_end(ap);
    return rc;
}

CURLMcode curl_multi_setopt(CURLM* m, CURLMoption option, ...) {
    va_list ap;
    va_start(ap, option);
    CURLMcode rc = forward_option(curl_multi_setopt_fn(), m, option, ap);
    va_end(ap);
    return rc;
}

// Every getinfo answer is written through a pointer.
CURLcode curl_easy_getinfo(CURL* h, CURLINFO info, ...) {
    va_list ap;
    va_start(ap, info);
    void* out = va_arg(ap, void*);
    va_end(ap);
    return curl_easy_getinfo_fn()(h, info, out);
}

// CURLSHOPT_SHARE / UNSHARE take an int (curl_lock_data); the lock functions and user data
// pointers.
CURLSHcode curl_share_setopt(CURLSH* s, CURLSHoption option, ...) {
    va_list ap;
    va_start(ap, option);
    CURLSHcode rc;
    if (option == CURLSHOPT_SHARE || option == CURLSHOPT_UNSHARE) rc = curl_share_setopt_fn()(s, option, va_arg(ap, int));
    else if (option == CURLSHOPT_LOCKFUNC || option == CURLSHOPT_UNLOCKFUNC) rc = curl_share_setopt_fn()(s, option, va_arg(ap, void (*)()));
    else rc = curl_share_setopt_fn()(s, option, va_arg(ap, void*));
    va_end(ap);
    return rc;
}

}  // extern "C"
