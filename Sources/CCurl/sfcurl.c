// libcurl loaded with dlopen on first use; see include/CCurl.h.

#define CURL_DISABLE_TYPECHECK 1
#define CURL_DISABLE_DEPRECATION 1

#include "CCurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// MARK: - The one-time loader

typedef CURLcode (*global_init_fn)(long);
typedef CURL *(*easy_init_fn)(void);
typedef void (*easy_cleanup_fn)(CURL *);
typedef CURLcode (*easy_setopt_fn)(CURL *, CURLoption, ...);
typedef CURLcode (*easy_getinfo_fn)(CURL *, CURLINFO, ...);
typedef CURLcode (*easy_perform_fn)(CURL *);
typedef void (*easy_reset_fn)(CURL *);
typedef const char *(*easy_strerror_fn)(CURLcode);
typedef struct curl_slist *(*slist_append_fn)(struct curl_slist *, const char *);
typedef void (*slist_free_all_fn)(struct curl_slist *);
typedef char *(*version_fn)(void);
typedef CURLU *(*url_fn)(void);
typedef void (*url_cleanup_fn)(CURLU *);
typedef CURLUcode (*url_set_fn)(CURLU *, CURLUPart, const char *, unsigned int);
typedef CURLUcode (*url_get_fn)(CURLU *, CURLUPart, char **, unsigned int);
typedef void (*free_fn)(void *);
typedef const char *(*url_strerror_fn)(CURLUcode);
typedef CURLM *(*multi_init_fn)(void);
typedef CURLMcode (*multi_cleanup_fn)(CURLM *);
typedef CURLMcode (*multi_add_fn)(CURLM *, CURL *);
typedef CURLMcode (*multi_remove_fn)(CURLM *, CURL *);
typedef CURLMcode (*multi_perform_fn)(CURLM *, int *);
typedef CURLMcode (*multi_poll_fn)(CURLM *, struct curl_waitfd *, unsigned int, int, int *);
typedef CURLMcode (*multi_wakeup_fn)(CURLM *);
typedef CURLMsg *(*multi_info_read_fn)(CURLM *, int *);

static struct {
    global_init_fn global_init;
    easy_init_fn easy_init;
    easy_cleanup_fn easy_cleanup;
    easy_setopt_fn easy_setopt;
    easy_getinfo_fn easy_getinfo;
    easy_perform_fn easy_perform;
    easy_strerror_fn easy_strerror;
    slist_append_fn slist_append;
    slist_free_all_fn slist_free_all;
    version_fn version;
    url_fn url;
    url_cleanup_fn url_cleanup;
    url_set_fn url_set;
    url_get_fn url_get;
    free_fn free;
    url_strerror_fn url_strerror;  // optional (7.80+)
    easy_reset_fn easy_reset;      // optional (7.12.1+, so present in practice)
    // Optional: without them sfcurl_perform falls back to curl_easy_perform.
    multi_init_fn multi_init;
    multi_cleanup_fn multi_cleanup;
    multi_add_fn multi_add;
    multi_remove_fn multi_remove;
    multi_perform_fn multi_perform;
    multi_poll_fn multi_poll;
    multi_wakeup_fn multi_wakeup;
    multi_info_read_fn multi_info_read;
} fn;

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int loaded = 0;

static void copy_error(char *error, size_t error_len, const char *text) {
    if (error == NULL || error_len == 0) return;
    snprintf(error, error_len, "%s", text ? text : "unknown error");
}

static const char *const default_names[] = {"libcurl.so.4", "libcurl-gnutls.so.4", NULL};

int sfcurl_load(const char *const *names, char *error, size_t error_len) {
    if (atomic_load_explicit(&loaded, memory_order_acquire)) return 0;
    pthread_mutex_lock(&load_lock);
    if (atomic_load_explicit(&loaded, memory_order_relaxed)) {
        pthread_mutex_unlock(&load_lock);
        return 0;
    }
    if (names == NULL || names[0] == NULL) names = default_names;

    void *lib = NULL;
    const char *name = NULL;
    char first_error[512] = "";
    for (size_t i = 0; names[i] != NULL && lib == NULL; i++) {
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (lib != NULL) {
            name = names[i];
        } else if (i == 0) {
            copy_error(first_error, sizeof first_error, dlerror());
        }
    }
    if (lib == NULL) {
        copy_error(error, error_len, first_error);
        pthread_mutex_unlock(&load_lock);
        return -1;
    }

    const char *missing = NULL;
#define REQUIRED(field, symbol)                                  \
    do {                                                         \
        *(void **)(&fn.field) = dlsym(lib, symbol);              \
        if (fn.field == NULL && missing == NULL) missing = symbol; \
    } while (0)
#define OPTIONAL(field, symbol) (*(void **)(&fn.field) = dlsym(lib, symbol))
    REQUIRED(global_init, "curl_global_init");
    REQUIRED(easy_init, "curl_easy_init");
    REQUIRED(easy_cleanup, "curl_easy_cleanup");
    REQUIRED(easy_setopt, "curl_easy_setopt");
    REQUIRED(easy_getinfo, "curl_easy_getinfo");
    REQUIRED(easy_perform, "curl_easy_perform");
    REQUIRED(easy_strerror, "curl_easy_strerror");
    REQUIRED(slist_append, "curl_slist_append");
    REQUIRED(slist_free_all, "curl_slist_free_all");
    REQUIRED(version, "curl_version");
    REQUIRED(url, "curl_url");
    REQUIRED(url_cleanup, "curl_url_cleanup");
    REQUIRED(url_set, "curl_url_set");
    REQUIRED(url_get, "curl_url_get");
    REQUIRED(free, "curl_free");
    OPTIONAL(url_strerror, "curl_url_strerror");
    OPTIONAL(easy_reset, "curl_easy_reset");
    OPTIONAL(multi_init, "curl_multi_init");
    OPTIONAL(multi_cleanup, "curl_multi_cleanup");
    OPTIONAL(multi_add, "curl_multi_add_handle");
    OPTIONAL(multi_remove, "curl_multi_remove_handle");
    OPTIONAL(multi_perform, "curl_multi_perform");
    OPTIONAL(multi_poll, "curl_multi_poll");
    OPTIONAL(multi_wakeup, "curl_multi_wakeup");
    OPTIONAL(multi_info_read, "curl_multi_info_read");
#undef REQUIRED
#undef OPTIONAL

    if (missing != NULL) {
        char text[256];
        snprintf(text, sizeof text, "%s has no symbol %s (libcurl 7.62 or later is required)", name, missing);
        copy_error(error, error_len, text);
        memset(&fn, 0, sizeof fn);
        dlclose(lib);
        pthread_mutex_unlock(&load_lock);
        return -1;
    }
    CURLcode init = fn.global_init(CURL_GLOBAL_DEFAULT);
    if (init != CURLE_OK) {
        char text[256];
        snprintf(text, sizeof text, "curl_global_init failed: %s", fn.easy_strerror(init));
        copy_error(error, error_len, text);
        memset(&fn, 0, sizeof fn);
        // Not dlclosed: a half-initialised library may have registered handlers.
        pthread_mutex_unlock(&load_lock);
        return -1;
    }
    atomic_store_explicit(&loaded, 1, memory_order_release);
    pthread_mutex_unlock(&load_lock);
    return 0;
}

int sfcurl_is_loaded(void) { return atomic_load_explicit(&loaded, memory_order_acquire); }

const char *sfcurl_version(void) { return sfcurl_is_loaded() ? fn.version() : NULL; }


// MARK: - Typed wrappers

#define IF_LOADED(value) \
    if (!sfcurl_is_loaded()) return value

CURL *sfcurl_easy_init(void) {
    IF_LOADED(NULL);
    return fn.easy_init();
}

void sfcurl_easy_cleanup(CURL *handle) {
    IF_LOADED();
    if (handle != NULL) fn.easy_cleanup(handle);
}

int sfcurl_easy_reset(CURL *handle) {
    IF_LOADED(-1);
    if (fn.easy_reset == NULL || handle == NULL) return -1;
    fn.easy_reset(handle);
    return 0;
}

CURLcode sfcurl_setopt_long(CURL *handle, CURLoption option, long value) {
    IF_LOADED(CURLE_FAILED_INIT);
    return fn.easy_setopt(handle, option, value);
}

CURLcode sfcurl_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    IF_LOADED(CURLE_FAILED_INIT);
    return fn.easy_setopt(handle, option, value);
}

CURLcode sfcurl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    IF_LOADED(CURLE_FAILED_INIT);
    return fn.easy_setopt(handle, option, value);
}

CURLcode sfcurl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    IF_LOADED(CURLE_FAILED_INIT);
    return fn.easy_setopt(handle, option, value);
}

CURLcode sfcurl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    IF_LOADED(CURLE_FAILED_INIT);
    return fn.easy_setopt(handle, option, value);
}

CURLcode sfcurl_setopt_data_callback(CURL *handle, CURLoption option, sfcurl_data_callback callback) {
    IF_LOADED(CURLE_FAILED_INIT);
    return fn.easy_setopt(handle, option, callback);
}

CURLcode sfcurl_restrict_protocols(CURL *handle) {
    IF_LOADED(CURLE_FAILED_INIT);
    if (fn.easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https") == CURLE_OK) return CURLE_OK;
    return fn.easy_setopt(handle, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
}

CURLcode sfcurl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    IF_LOADED(CURLE_FAILED_INIT);
    return fn.easy_getinfo(handle, info, value);
}

struct curl_slist *sfcurl_slist_append(struct curl_slist *list, const char *string) {
    IF_LOADED(NULL);
    return fn.slist_append(list, string);
}

void sfcurl_slist_free_all(struct curl_slist *list) {
    IF_LOADED();
    fn.slist_free_all(list);
}

const char *sfcurl_easy_strerror(CURLcode code) {
    IF_LOADED("libcurl is not loaded");
    return fn.easy_strerror(code);
}

const char *sfcurl_url_strerror(int code) {
    IF_LOADED(NULL);
    return fn.url_strerror ? fn.url_strerror((CURLUcode)code) : NULL;
}

static int copy_url_part(CURLU *url, CURLUPart part, unsigned int flags, char *out, size_t out_len) {
    char *value = NULL;
    CURLUcode code = fn.url_get(url, part, &value, flags);
    if (code != CURLUE_OK) return (int)code;
    int fits = strlen(value) < out_len;
    if (fits) memcpy(out, value, strlen(value) + 1);
    fn.free(value);
    return fits ? CURLUE_OK : CURLUE_OUT_OF_MEMORY;
}

int sfcurl_url_parts(const char *url, char *scheme, size_t scheme_len, char *host, size_t host_len,
                     long *port) {
    IF_LOADED(CURLUE_BAD_HANDLE);
    CURLU *parsed = fn.url();
    if (parsed == NULL) return CURLUE_OUT_OF_MEMORY;
    int code = fn.url_set(parsed, CURLUPART_URL, url, 0);
    if (code == CURLUE_OK) code = copy_url_part(parsed, CURLUPART_SCHEME, 0, scheme, scheme_len);
    if (code == CURLUE_OK) code = copy_url_part(parsed, CURLUPART_HOST, 0, host, host_len);
    if (code == CURLUE_OK) {
        char digits[16];
        code = copy_url_part(parsed, CURLUPART_PORT, CURLU_DEFAULT_PORT, digits, sizeof digits);
        if (code == CURLUE_OK && port != NULL) *port = strtol(digits, NULL, 10);
    }
    fn.url_cleanup(parsed);
    return code;
}

// MARK: - Cancellable perform

struct sfcurl_cancel {
    atomic_int signalled;
    pthread_mutex_t lock;  // guards `multi` against curl_multi_cleanup while waking it
    CURLM *multi;
};

sfcurl_cancel *sfcurl_cancel_create(void) {
    sfcurl_cancel *cancel = calloc(1, sizeof *cancel);
    if (cancel == NULL) return NULL;
    atomic_init(&cancel->signalled, 0);
    pthread_mutex_init(&cancel->lock, NULL);
    cancel->multi = NULL;
    return cancel;
}

void sfcurl_cancel_destroy(sfcurl_cancel *cancel) {
    if (cancel == NULL) return;
    pthread_mutex_destroy(&cancel->lock);
    free(cancel);
}

void sfcurl_cancel_signal(sfcurl_cancel *cancel) {
    if (cancel == NULL) return;
    atomic_store(&cancel->signalled, 1);
    pthread_mutex_lock(&cancel->lock);
    if (cancel->multi != NULL && fn.multi_wakeup != NULL) fn.multi_wakeup(cancel->multi);
    pthread_mutex_unlock(&cancel->lock);
}

int sfcurl_cancel_is_signalled(sfcurl_cancel *cancel) {
    return cancel != NULL && atomic_load(&cancel->signalled);
}

static int xferinfo(void *context, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow) {
    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    return sfcurl_cancel_is_signalled((sfcurl_cancel *)context) ? 1 : 0;
}

CURLcode sfcurl_perform(CURL *handle, sfcurl_cancel *cancel) {
    IF_LOADED(CURLE_FAILED_INIT);
    if (sfcurl_cancel_is_signalled(cancel)) return CURLE_ABORTED_BY_CALLBACK;
    CURLcode code = fn.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, (curl_xferinfo_callback)xferinfo);
    if (code == CURLE_OK) code = fn.easy_setopt(handle, CURLOPT_XFERINFODATA, (void *)cancel);
    if (code == CURLE_OK) code = fn.easy_setopt(handle, CURLOPT_NOPROGRESS, 0L);
    if (code != CURLE_OK) return code;
    if (cancel == NULL) return fn.easy_perform(handle);

    int have_multi = fn.multi_init && fn.multi_cleanup && fn.multi_add && fn.multi_remove && fn.multi_perform &&
                     fn.multi_poll && fn.multi_wakeup && fn.multi_info_read;
    CURLM *multi = have_multi ? fn.multi_init() : NULL;
    if (multi == NULL) return fn.easy_perform(handle);  // cancellation through xferinfo only

    if (fn.multi_add(multi, handle) != CURLM_OK) {
        fn.multi_cleanup(multi);
        return CURLE_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&cancel->lock);
    cancel->multi = multi;
    pthread_mutex_unlock(&cancel->lock);

    CURLcode result = CURLE_OK;
    int done = 0;
    while (!done) {
        if (sfcurl_cancel_is_signalled(cancel)) {
            result = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        int running = 0;
        CURLMcode mcode = fn.multi_perform(multi, &running);
        if (mcode != CURLM_OK) {
            result = mcode == CURLM_OUT_OF_MEMORY ? CURLE_OUT_OF_MEMORY : CURLE_FAILED_INIT;
            break;
        }
        int queued = 0;
        CURLMsg *message;
        while ((message = fn.multi_info_read(multi, &queued)) != NULL) {
            if (message->msg == CURLMSG_DONE && message->easy_handle == handle) {
                result = message->data.result;
                done = 1;
            }
        }
        if (done) break;
        if (running == 0) {  // finished without a DONE message: should not happen
            result = CURLE_FAILED_INIT;
            break;
        }
        // Waits for socket activity, libcurl's own next timeout, a wakeup, or at most a second.
        mcode = fn.multi_poll(multi, NULL, 0, 1000, NULL);
        if (mcode != CURLM_OK) {
            result = CURLE_FAILED_INIT;
            break;
        }
    }

    pthread_mutex_lock(&cancel->lock);
    cancel->multi = NULL;
    pthread_mutex_unlock(&cancel->lock);
    fn.multi_remove(multi, handle);
    fn.multi_cleanup(multi);
    return result;
}
