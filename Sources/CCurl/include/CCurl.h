// Typed, non-variadic access to libcurl, which is loaded with dlopen on first use.
//
// Merely linking libcurl costs every process start 6–8 ms (it pulls in ~40 shared libraries), so
// this target does not link it: `<curl/curl.h>` supplies types and constants only, and
// `sfcurl_load` resolves the functions with dlopen/dlsym the first time a request is made.
// Every other function here must be called only after `sfcurl_load` returned 0 (they return an
// error value, never crash, if it did not).

#ifndef SFAUTH_CCURL_H
#define SFAUTH_CCURL_H

#include <stddef.h>
#include <curl/curl.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Loads libcurl (the first of `names` that dlopen accepts, a NULL-terminated list; NULL means
/// {"libcurl.so.4", "libcurl-gnutls.so.4"}) and calls `curl_global_init` once per process.
/// Thread-safe. Returns 0 on success (also when already loaded: later calls ignore `names`);
/// otherwise -1 with a one-line reason (dlerror text) in `error`.
int sfcurl_load(const char *const *names, char *error, size_t error_len);

/// 1 once libcurl has been loaded in this process, else 0. Never loads anything.
int sfcurl_is_loaded(void);

/// libcurl's version string, e.g. "libcurl/7.88.1 OpenSSL/3.0.x …", or NULL before a load.
const char *sfcurl_version(void);

CURL *sfcurl_easy_init(void);
void sfcurl_easy_cleanup(CURL *handle);
/// curl_easy_reset: every option back to its default, the handle's connections and caches kept
/// (so one handle reused for many requests keeps its connection to the server). Returns -1 when the
/// runtime libcurl lacks it (the caller then uses a new handle), 0 otherwise.
int sfcurl_easy_reset(CURL *handle);
CURLcode sfcurl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode sfcurl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
CURLcode sfcurl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode sfcurl_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode sfcurl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value);

/// The shape of CURLOPT_WRITEFUNCTION, CURLOPT_HEADERFUNCTION and CURLOPT_READFUNCTION callbacks.
typedef size_t (*sfcurl_data_callback)(char *data, size_t size, size_t count, void *context);
CURLcode sfcurl_setopt_data_callback(CURL *handle, CURLoption option, sfcurl_data_callback callback);

/// Restricts the handle to http and https: CURLOPT_PROTOCOLS_STR "http,https", or the
/// CURLOPT_PROTOCOLS bit mask when the runtime libcurl is older than 7.85.
CURLcode sfcurl_restrict_protocols(CURL *handle);

CURLcode sfcurl_getinfo_long(CURL *handle, CURLINFO info, long *value);
struct curl_slist *sfcurl_slist_append(struct curl_slist *list, const char *string);
void sfcurl_slist_free_all(struct curl_slist *list);
const char *sfcurl_easy_strerror(CURLcode code);

/// Parses `url` with libcurl's own URL parser and copies out its scheme, host (IPv6 in brackets)
/// and port (the scheme's default when absent). Returns CURLUE_OK (0) or a CURLUcode.
int sfcurl_url_parts(const char *url, char *scheme, size_t scheme_len, char *host, size_t host_len,
                     long *port);

/// libcurl's text for a CURLUcode, or NULL when the runtime libcurl is older than 7.80.
const char *sfcurl_url_strerror(int code);

/// A cancellation signal for one transfer. May be created before libcurl is loaded.
typedef struct sfcurl_cancel sfcurl_cancel;
sfcurl_cancel *sfcurl_cancel_create(void);
void sfcurl_cancel_destroy(sfcurl_cancel *cancel);
/// Marks the transfer cancelled and wakes it up if it is waiting on the network. Thread-safe,
/// callable at any time (before, during or after `sfcurl_perform`).
void sfcurl_cancel_signal(sfcurl_cancel *cancel);
int sfcurl_cancel_is_signalled(sfcurl_cancel *cancel);

/// Performs the transfer on `handle`, blocking the calling thread. Returns CURLE_ABORTED_BY_CALLBACK
/// promptly after `sfcurl_cancel_signal`. Uses a private multi handle woken by
/// curl_multi_wakeup when the runtime libcurl has it (7.68+); otherwise curl_easy_perform with a
/// transfer-info callback that aborts within about a second.
CURLcode sfcurl_perform(CURL *handle, sfcurl_cancel *cancel);

#ifdef __cplusplus
}
#endif

#endif
