// libsecret loaded with dlopen on first use; see include/CSecret.h.

#define _GNU_SOURCE 1

#include "CSecret.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

// MARK: - The few GLib and libsecret declarations we need (ABI-stable; no headers, no pkg-config)

typedef int gboolean;
typedef uint32_t GQuark;
typedef struct {
    GQuark domain;
    int code;
    char *message;
} GError;
typedef struct GList {
    void *data;
    struct GList *next;
    struct GList *prev;
} GList;
typedef struct GHashTable GHashTable;
typedef struct GCancellable GCancellable;
typedef struct GDBusConnection GDBusConnection;
typedef struct SecretService SecretService;        // a GDBusProxy
typedef struct SecretCollection SecretCollection;  // a GDBusProxy
typedef struct SecretItem SecretItem;              // a GDBusProxy
typedef struct SecretValue SecretValue;
typedef unsigned int (*GHashFunc)(const void *key);
typedef gboolean (*GEqualFunc)(const void *a, const void *b);

// libsecret's public SecretSchema struct (secret-schema.h, unchanged since 0.7).
typedef struct {
    const char *name;
    int type;  // SecretSchemaAttributeType: 0 = string
} SecretSchemaAttribute;
typedef struct {
    const char *name;
    int flags;  // SecretSchemaFlags: 0 = match the schema name
    SecretSchemaAttribute attributes[32];
    int reserved;
    void *reserved1, *reserved2, *reserved3, *reserved4, *reserved5, *reserved6, *reserved7;
} SecretSchema;

enum {
    SECRET_SERVICE_NONE = 0,
    SECRET_COLLECTION_NONE = 0,
    SECRET_SEARCH_ALL = 1 << 1,
    SECRET_SEARCH_LOAD_SECRETS = 1 << 3,  // never SECRET_SEARCH_UNLOCK (1 << 2): no prompts
    SECRET_ITEM_CREATE_REPLACE = 1 << 1,
    SECRET_SCHEMA_ATTRIBUTE_STRING = 0,
    G_IO_ERROR_CLOSED = 18,
    G_IO_ERROR_CANCELLED = 19,
    G_IO_ERROR_TIMED_OUT = 24,
};

static struct {
    SecretService *(*service_get_sync)(int flags, GCancellable *, GError **);
    GList *(*service_search_sync)(SecretService *, const SecretSchema *, GHashTable *, int flags,
                                  GCancellable *, GError **);
    SecretCollection *(*collection_for_alias_sync)(SecretService *, const char *alias, int flags,
                                                   GCancellable *, GError **);
    gboolean (*collection_get_locked)(SecretCollection *);
    gboolean (*item_get_locked)(SecretItem *);
    SecretValue *(*item_get_secret)(SecretItem *);
    gboolean (*item_load_secret_sync)(SecretItem *, GCancellable *, GError **);
    gboolean (*item_delete_sync)(SecretItem *, GCancellable *, GError **);
    SecretItem *(*item_create_sync)(SecretCollection *, const SecretSchema *, GHashTable *,
                                    const char *label, SecretValue *, int flags, GCancellable *,
                                    GError **);
    SecretValue *(*value_new)(const char *secret, long length, const char *content_type);
    const char *(*value_get)(SecretValue *, size_t *length);
    void (*value_unref)(void *);
    GHashTable *(*hash_table_new)(GHashFunc, GEqualFunc);
    gboolean (*hash_table_insert)(GHashTable *, void *key, void *value);
    void (*hash_table_unref)(GHashTable *);
    GHashFunc str_hash;
    GEqualFunc str_equal;
    void (*list_free)(GList *);
    void (*error_free)(GError *);
    void (*g_free)(void *);
    void (*object_unref)(void *);
    GCancellable *(*cancellable_new)(void);
    void (*cancellable_cancel)(GCancellable *);
    char *(*proxy_get_name_owner)(void *proxy);
    GDBusConnection *(*proxy_get_connection)(void *proxy);
    void (*connection_set_exit_on_close)(GDBusConnection *, gboolean);
    GQuark (*io_error_quark)(void);
    char *(*dbus_error_get_remote_error)(const GError *);
    gboolean (*dbus_error_strip_remote_error)(GError *);
} fn;

// MARK: - Results

static void set_result(sfsecret_result *result, int status, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

static void set_result(sfsecret_result *result, int status, const char *format, ...) {
    if (result == NULL) return;
    result->status = status;
    va_list args;
    va_start(args, format);
    vsnprintf(result->message, sizeof result->message, format, args);
    va_end(args);
    // One line: GLib messages sometimes carry newlines.
    for (char *c = result->message; *c; c++) {
        if (*c == '\n' || *c == '\r' || *c == '\t') *c = ' ';
    }
}

// MARK: - The one-time loader

static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int loaded = 0;


static int resolve_all(void *handle, const char **missing) {
#define RESOLVE(field, symbol)                                 \
    do {                                                       \
        *(void **)(&fn.field) = dlsym(handle, symbol);         \
        if (fn.field == NULL) {                                \
            *missing = symbol;                                 \
            return -1;                                         \
        }                                                      \
    } while (0)
    // dlsym on libsecret's handle also finds GLib, GObject and GIO: they are its dependencies.
    RESOLVE(service_get_sync, "secret_service_get_sync");
    RESOLVE(service_search_sync, "secret_service_search_sync");
    RESOLVE(collection_for_alias_sync, "secret_collection_for_alias_sync");
    RESOLVE(collection_get_locked, "secret_collection_get_locked");
    RESOLVE(item_get_locked, "secret_item_get_locked");
    RESOLVE(item_get_secret, "secret_item_get_secret");
    RESOLVE(item_load_secret_sync, "secret_item_load_secret_sync");
    RESOLVE(item_delete_sync, "secret_item_delete_sync");
    RESOLVE(item_create_sync, "secret_item_create_sync");
    RESOLVE(value_new, "secret_value_new");
    RESOLVE(value_get, "secret_value_get");
    RESOLVE(value_unref, "secret_value_unref");
    RESOLVE(hash_table_new, "g_hash_table_new");
    RESOLVE(hash_table_insert, "g_hash_table_insert");
    RESOLVE(hash_table_unref, "g_hash_table_unref");
    RESOLVE(str_hash, "g_str_hash");
    RESOLVE(str_equal, "g_str_equal");
    RESOLVE(list_free, "g_list_free");
    RESOLVE(error_free, "g_error_free");
    RESOLVE(g_free, "g_free");
    RESOLVE(object_unref, "g_object_unref");
    RESOLVE(cancellable_new, "g_cancellable_new");
    RESOLVE(cancellable_cancel, "g_cancellable_cancel");
    RESOLVE(proxy_get_name_owner, "g_dbus_proxy_get_name_owner");
    RESOLVE(proxy_get_connection, "g_dbus_proxy_get_connection");
    RESOLVE(connection_set_exit_on_close, "g_dbus_connection_set_exit_on_close");
    RESOLVE(io_error_quark, "g_io_error_quark");
    RESOLVE(dbus_error_get_remote_error, "g_dbus_error_get_remote_error");
    RESOLVE(dbus_error_strip_remote_error, "g_dbus_error_strip_remote_error");
#undef RESOLVE
    return 0;
}

static int load_library(const sfsecret_options *options, sfsecret_result *result) {
    if (atomic_load(&loaded)) return 0;
    static const char *const default_names[] = {"libsecret-1.so.0", NULL};
    const char *const *names =
        (options != NULL && options->library_names != NULL) ? options->library_names : default_names;

    pthread_mutex_lock(&load_lock);
    if (atomic_load(&loaded)) {
        pthread_mutex_unlock(&load_lock);
        return 0;
    }
    char detail[400] = "no library name given";
    for (const char *const *name = names; *name != NULL; name++) {
        void *handle = dlopen(*name, RTLD_NOW | RTLD_LOCAL);
        if (handle == NULL) {
            const char *reason = dlerror();
            snprintf(detail, sizeof detail, "%s", reason ? reason : *name);
            continue;
        }
        const char *missing = NULL;
        if (resolve_all(handle, &missing) != 0) {
            snprintf(detail, sizeof detail, "%s has no symbol %s (libsecret older than 0.18?)", *name,
                     missing);
            memset(&fn, 0, sizeof fn);
            dlclose(handle);
            continue;
        }
        // Never dlclose: GLib cannot be unloaded (its types and threads stay registered).
        atomic_store(&loaded, 1);
        pthread_mutex_unlock(&load_lock);
        return 0;
    }
    pthread_mutex_unlock(&load_lock);
    set_result(result, SFSECRET_NO_LIBRARY, "%s", detail);
    return -1;
}

// MARK: - Is there a session bus to talk to?

// GLib finds the session bus from DBUS_SESSION_BUS_ADDRESS, then $XDG_RUNTIME_DIR/bus, then (with
// an X11 $DISPLAY) by autolaunching a new bus with dbus-launch. The last never has a keyring on it
// and can be slow, so without either of the first two we report "no session bus" at once.
static int session_bus_configured(sfsecret_result *result) {
    const char *address = getenv("DBUS_SESSION_BUS_ADDRESS");
    if (address != NULL && address[0] != '\0') return 1;
    const char *runtime = getenv("XDG_RUNTIME_DIR");
    if (runtime != NULL && runtime[0] != '\0') {
        char path[4096];
        struct stat st;
        if (snprintf(path, sizeof path, "%s/bus", runtime) < (int)sizeof path &&
            stat(path, &st) == 0 && S_ISSOCK(st.st_mode))
            return 1;
    }
    set_result(result, SFSECRET_NO_BUS,
               "DBUS_SESSION_BUS_ADDRESS is not set and there is no $XDG_RUNTIME_DIR/bus");
    return 0;
}

// MARK: - Jobs: one operation on a worker thread, bounded by a deadline

enum { OP_LOOKUP, OP_STORE, OP_DELETE, OP_PROBE };

typedef struct {
    atomic_int refs;
    int op;
    char *schema_name;
    char *account;
    char *kind;
    char *label;
    char *secret;  // to store (wiped on free)
    char *found;   // looked up (wiped on free unless handed to the caller)
    SecretSchema schema;  // points into schema_name; lives as long as the worker may use it
    sfsecret_result result;
    GCancellable *cancellable;
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int done;
} job;

static void init_schema(SecretSchema *schema, const char *name);

static void wipe_free(char *text) {
    if (text == NULL) return;
    explicit_bzero(text, strlen(text));
    free(text);
}

static void job_unref(job *j) {
    if (atomic_fetch_sub(&j->refs, 1) != 1) return;
    free(j->schema_name);
    free(j->account);
    free(j->kind);
    free(j->label);
    wipe_free(j->secret);
    wipe_free(j->found);
    if (j->cancellable != NULL) fn.object_unref(j->cancellable);
    pthread_mutex_destroy(&j->mutex);
    pthread_cond_destroy(&j->cond);
    free(j);
}

static char *copy_or_null(const char *text) { return text ? strdup(text) : NULL; }

static job *job_new(int op, const sfsecret_options *options, const char *account, const char *kind) {
    job *j = calloc(1, sizeof *j);
    if (j == NULL) return NULL;
    atomic_init(&j->refs, 1);
    j->op = op;
    pthread_mutex_init(&j->mutex, NULL);
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&j->cond, &attributes);
    pthread_condattr_destroy(&attributes);
    const char *schema =
        (options != NULL && options->schema_name != NULL) ? options->schema_name : "io.sfauth.Credentials";
    j->schema_name = strdup(schema);
    init_schema(&j->schema, j->schema_name);
    j->account = copy_or_null(account);
    j->kind = copy_or_null(kind);
    j->cancellable = fn.cancellable_new();
    if (j->schema_name == NULL || (account && !j->account) || (kind && !j->kind) || !j->cancellable) {
        job_unref(j);
        return NULL;
    }
    return j;
}

static int streq(const char *a, const char *b) { return a != NULL && b != NULL && strcmp(a, b) == 0; }

static int starts_with(const char *text, const char *prefix) {
    return text != NULL && strncmp(text, prefix, strlen(prefix)) == 0;
}

// Maps a GError to a status, sets the job's result ("<context>: <message>") and frees the error.
// `fallback` is the status when nothing more specific is known.
static void fail_with_error(job *j, GError *error, int fallback, const char *context) {
    if (error == NULL) {
        set_result(&j->result, fallback, "%s", context);
        return;
    }
    int status = fallback;
    if (error->domain == fn.io_error_quark() && error->code == G_IO_ERROR_CANCELLED) {
        status = SFSECRET_TIMED_OUT;  // only our deadline cancels
    } else {
        char *remote = fn.dbus_error_get_remote_error(error);
        if (remote != NULL) {
            if (streq(remote, "org.freedesktop.DBus.Error.ServiceUnknown") ||
                streq(remote, "org.freedesktop.DBus.Error.NameHasNoOwner") ||
                starts_with(remote, "org.freedesktop.DBus.Error.Spawn.")) {
                status = SFSECRET_NO_SERVICE;
            } else if (streq(remote, "org.freedesktop.DBus.Error.NoReply") ||
                       streq(remote, "org.freedesktop.DBus.Error.Timeout") ||
                       streq(remote, "org.freedesktop.DBus.Error.TimedOut")) {
                status = SFSECRET_TIMED_OUT;
            } else if (streq(remote, "org.freedesktop.Secret.Error.IsLocked")) {
                status = SFSECRET_LOCKED;
            } else if (fallback == SFSECRET_NO_BUS) {
                status = SFSECRET_FAILED;  // the bus answered, so there is one
            }
            fn.g_free(remote);
            fn.dbus_error_strip_remote_error(error);
        } else if (error->domain == fn.io_error_quark() && error->code == G_IO_ERROR_TIMED_OUT) {
            status = SFSECRET_TIMED_OUT;
        } else if (error->domain == fn.io_error_quark() && error->code == G_IO_ERROR_CLOSED) {
            // The session bus went away. GLib keeps the closed connection as the process's session
            // bus (and complains loudly about a new proxy on it), so later calls fail the same way.
            set_result(&j->result, SFSECRET_NO_BUS, "the connection to the session bus was closed");
            fn.error_free(error);
            return;
        }
    }
    set_result(&j->result, status, "%s: %s", context, error->message ? error->message : "unknown error");
    fn.error_free(error);
}

// The Secret Service proxy (a new reference), or NULL with the job's result set.
static SecretService *connect_service(job *j) {
    GError *error = NULL;
    SecretService *service = fn.service_get_sync(SECRET_SERVICE_NONE, j->cancellable, &error);
    if (service == NULL) {
        // Name the bus without its guid: "unix:path=/run/user/1000/bus: Could not connect: …".
        char where[256];
        const char *address = getenv("DBUS_SESSION_BUS_ADDRESS");
        if (address != NULL && address[0] != '\0') {
            size_t length = strcspn(address, ",;");
            snprintf(where, sizeof where, "%.*s", (int)(length < 200 ? length : 200), address);
        } else {
            snprintf(where, sizeof where, "%s", "$XDG_RUNTIME_DIR/bus");
        }
        fail_with_error(j, error, SFSECRET_NO_BUS, where);
        return NULL;
    }
    if (error != NULL) fn.error_free(error);
    // GLib's shared session connection raises SIGTERM in the whole process when the bus goes
    // away; a credential store must not kill its host program.
    GDBusConnection *connection = fn.proxy_get_connection(service);
    if (connection != NULL) fn.connection_set_exit_on_close(connection, 0);
    char *owner = fn.proxy_get_name_owner(service);
    if (owner == NULL) {
        fn.object_unref(service);
        set_result(&j->result, SFSECRET_NO_SERVICE,
                   "org.freedesktop.secrets has no owner");
        return NULL;
    }
    fn.g_free(owner);
    return service;
}

static void locked_result(job *j, const char *what) {
    set_result(&j->result, SFSECRET_LOCKED, "%s", what);
}

// Whether the default collection can be used: 1 when it is unlocked (or, with `missing_ok`, when
// there is none), else 0 with the result set (locked, no default collection, or the error).
// With `out`, hands out the usable collection (a new reference; NULL when missing).
static int require_default_collection(job *j, SecretService *service, SecretCollection **out, int missing_ok) {
    if (out != NULL) *out = NULL;
    GError *error = NULL;
    SecretCollection *collection =
        fn.collection_for_alias_sync(service, "default", SECRET_COLLECTION_NONE, j->cancellable, &error);
    if (error != NULL) {
        if (collection != NULL) fn.object_unref(collection);
        fail_with_error(j, error, SFSECRET_FAILED, "reading the default collection failed");
        return 0;
    }
    if (collection == NULL) {
        if (!missing_ok) set_result(&j->result, SFSECRET_NO_COLLECTION, "the Secret Service has no default collection");
        return missing_ok;
    }
    if (fn.collection_get_locked(collection)) {
        fn.object_unref(collection);
        locked_result(j, "the default collection is locked");
        return 0;
    }
    if (out != NULL)
        *out = collection;
    else
        fn.object_unref(collection);
    return 1;
}

static GHashTable *new_attributes(job *j) {
    GHashTable *attributes = fn.hash_table_new(fn.str_hash, fn.str_equal);
    // Keys and values are borrowed from the job, which outlives the table.
    fn.hash_table_insert(attributes, (void *)"account", j->account);
    fn.hash_table_insert(attributes, (void *)"kind", j->kind);
    return attributes;
}

static void init_schema(SecretSchema *schema, const char *name) {
    memset(schema, 0, sizeof *schema);
    schema->name = name;
    schema->flags = 0;
    schema->attributes[0].name = "account";
    schema->attributes[0].type = SECRET_SCHEMA_ATTRIBUTE_STRING;
    schema->attributes[1].name = "kind";
    schema->attributes[1].type = SECRET_SCHEMA_ATTRIBUTE_STRING;
}

static void free_items(GList *items) {
    for (GList *l = items; l != NULL; l = l->next) fn.object_unref(l->data);
    fn.list_free(items);
}

static void run_lookup(job *j, SecretService *service) {
    GHashTable *attributes = new_attributes(j);
    GError *error = NULL;
    GList *items = fn.service_search_sync(service, &j->schema, attributes,
                                          SECRET_SEARCH_ALL | SECRET_SEARCH_LOAD_SECRETS,
                                          j->cancellable, &error);
    fn.hash_table_unref(attributes);
    if (error != NULL) {
        free_items(items);
        fail_with_error(j, error, SFSECRET_FAILED, "searching the keyring failed");
        return;
    }
    int saw_locked = 0;
    for (GList *l = items; l != NULL && j->found == NULL; l = l->next) {
        SecretItem *item = l->data;
        if (fn.item_get_locked(item)) {
            saw_locked = 1;
            continue;
        }
        SecretValue *value = fn.item_get_secret(item);
        if (value == NULL) {
            // The search drops secret-loading failures; ask once more to get the real error.
            if (!fn.item_load_secret_sync(item, j->cancellable, &error)) {
                free_items(items);
                fail_with_error(j, error, SFSECRET_FAILED, "reading the secret failed");
                return;
            }
            value = fn.item_get_secret(item);
            if (value == NULL) continue;  // deleted since the search
        }
        size_t length = 0;
        const char *data = fn.value_get(value, &length);
        if (data == NULL || memchr(data, '\0', length) != NULL) {
            fn.value_unref(value);
            free_items(items);
            set_result(&j->result, SFSECRET_FAILED, "the stored secret is not text");
            return;
        }
        j->found = malloc(length + 1);
        if (j->found == NULL) {
            fn.value_unref(value);
            free_items(items);
            set_result(&j->result, SFSECRET_FAILED, "out of memory");
            return;
        }
        memcpy(j->found, data, length);
        j->found[length] = '\0';
        fn.value_unref(value);
    }
    free_items(items);
    if (j->found != NULL) {
        set_result(&j->result, SFSECRET_OK, "%s", "");
        return;
    }
    if (saw_locked) {
        locked_result(j, "the secret is in a locked collection");
        return;
    }
    // Nothing found. Some services hide the items of a locked collection from searches, so a
    // locked default collection means "could not look", not "none".
    if (require_default_collection(j, service, NULL, 1)) set_result(&j->result, SFSECRET_OK, "%s", "");
}

static void run_store(job *j, SecretService *service) {
    SecretCollection *collection = NULL;
    if (!require_default_collection(j, service, &collection, 0)) return;
    GHashTable *attributes = new_attributes(j);
    SecretValue *value = fn.value_new(j->secret, -1, "text/plain");
    GError *error = NULL;
    SecretItem *item = fn.item_create_sync(collection, &j->schema, attributes, j->label, value,
                                           SECRET_ITEM_CREATE_REPLACE, j->cancellable, &error);
    fn.value_unref(value);
    fn.hash_table_unref(attributes);
    fn.object_unref(collection);
    if (item == NULL) {
        fail_with_error(j, error, SFSECRET_FAILED, "storing the secret failed");
        return;
    }
    if (error != NULL) fn.error_free(error);
    fn.object_unref(item);
    set_result(&j->result, SFSECRET_OK, "%s", "");
}

static void run_delete(job *j, SecretService *service) {
    GHashTable *attributes = new_attributes(j);
    GError *error = NULL;
    GList *items =
        fn.service_search_sync(service, &j->schema, attributes, SECRET_SEARCH_ALL, j->cancellable, &error);
    fn.hash_table_unref(attributes);
    if (error != NULL) {
        free_items(items);
        fail_with_error(j, error, SFSECRET_FAILED, "searching the keyring failed");
        return;
    }
    for (GList *l = items; l != NULL; l = l->next) {
        if (fn.item_get_locked(l->data)) {
            free_items(items);
            locked_result(j, "the secret is in a locked collection");
            return;
        }
    }
    int found = items != NULL;
    for (GList *l = items; l != NULL; l = l->next) {
        if (!fn.item_delete_sync(l->data, j->cancellable, &error)) {
            free_items(items);
            fail_with_error(j, error, SFSECRET_FAILED, "deleting the secret failed");
            return;
        }
    }
    free_items(items);
    // Nothing to delete may mean a locked collection hid it (see run_lookup).
    if (found || require_default_collection(j, service, NULL, 1)) set_result(&j->result, SFSECRET_OK, "%s", "");
}

static void run_probe(job *j, SecretService *service) {
    if (require_default_collection(j, service, NULL, 0)) set_result(&j->result, SFSECRET_OK, "%s", "");
}

static void *worker(void *context) {
    job *j = context;
    SecretService *service = connect_service(j);
    if (service != NULL) {
        switch (j->op) {
        case OP_LOOKUP: run_lookup(j, service); break;
        case OP_STORE: run_store(j, service); break;
        case OP_DELETE: run_delete(j, service); break;
        default: run_probe(j, service); break;
        }
        fn.object_unref(service);
    }
    pthread_mutex_lock(&j->mutex);
    j->done = 1;
    pthread_cond_broadcast(&j->cond);
    pthread_mutex_unlock(&j->mutex);
    job_unref(j);
    return NULL;
}

static void deadline_after(struct timespec *deadline, long milliseconds) {
    clock_gettime(CLOCK_MONOTONIC, deadline);
    deadline->tv_sec += milliseconds / 1000;
    deadline->tv_nsec += (milliseconds % 1000) * 1000000L;
    if (deadline->tv_nsec >= 1000000000L) {
        deadline->tv_sec += 1;
        deadline->tv_nsec -= 1000000000L;
    }
}

// Waits (mutex held) until the job is done or the deadline passes. Returns j->done.
static int wait_until(job *j, const struct timespec *deadline) {
    while (!j->done) {
        int rc = pthread_cond_timedwait(&j->cond, &j->mutex, deadline);
        if (rc == ETIMEDOUT) break;
    }
    return j->done;
}

// How long a cancelled libsecret call gets to unwind before we stop waiting for it.
#define CANCEL_GRACE_MS 200

// Runs the job on a new detached thread; consumes the caller's reference. Copies the outcome to
// `result` and hands the looked-up secret (if any) to `secret_out`.
static int run_job(job *j, int timeout_ms, sfsecret_result *result, char **secret_out) {
    if (timeout_ms < 1) timeout_ms = 1;
    atomic_fetch_add(&j->refs, 1);  // the worker's reference
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    int rc = pthread_create(&thread, &attributes, worker, j);
    pthread_attr_destroy(&attributes);
    if (rc != 0) {
        atomic_fetch_sub(&j->refs, 1);
        job_unref(j);
        set_result(result, SFSECRET_FAILED, "could not start a thread: %s", strerror(rc));
        return SFSECRET_FAILED;
    }

    struct timespec deadline;
    deadline_after(&deadline, timeout_ms);
    pthread_mutex_lock(&j->mutex);
    if (!wait_until(j, &deadline)) {
        pthread_mutex_unlock(&j->mutex);
        fn.cancellable_cancel(j->cancellable);  // thread-safe; libsecret's sync calls return
        deadline_after(&deadline, CANCEL_GRACE_MS);
        pthread_mutex_lock(&j->mutex);
        // Still stuck after the grace period: give up on it (the worker frees the job itself
        // whenever libsecret returns). Done but cancelled: the deadline passed too. Done with a
        // real outcome (it finished just as the deadline passed): use it.
        if (!wait_until(j, &deadline) || j->result.status == SFSECRET_TIMED_OUT) {
            set_result(result, SFSECRET_TIMED_OUT, "no answer within %d ms", timeout_ms);
            pthread_mutex_unlock(&j->mutex);
            job_unref(j);
            return SFSECRET_TIMED_OUT;
        }
    }
    // Done: take the outcome.
    if (result != NULL) *result = j->result;
    if (secret_out != NULL && j->result.status == SFSECRET_OK) {
        *secret_out = j->found;
        j->found = NULL;
    }
    int status = j->result.status;
    pthread_mutex_unlock(&j->mutex);
    job_unref(j);
    return status;
}

// MARK: - Public entry points

static int valid_text(const char *text) { return text != NULL && text[0] != '\0'; }

static int prepare(const sfsecret_options *options, sfsecret_result *result) {
    if (result == NULL) return -1;
    set_result(result, SFSECRET_OK, "%s", "");
    if (!session_bus_configured(result)) return -1;
    if (load_library(options, result) != 0) return -1;
    return 0;
}

int sfsecret_lookup(const sfsecret_options *options, const char *account, const char *kind,
                    int timeout_ms, char **secret_out, sfsecret_result *result) {
    if (secret_out != NULL) *secret_out = NULL;
    if (!valid_text(account) || !valid_text(kind) || secret_out == NULL) {
        set_result(result, SFSECRET_INVALID, "account and kind must not be empty");
        return SFSECRET_INVALID;
    }
    if (prepare(options, result) != 0) return result ? result->status : SFSECRET_INVALID;
    job *j = job_new(OP_LOOKUP, options, account, kind);
    if (j == NULL) {
        set_result(result, SFSECRET_FAILED, "out of memory");
        return SFSECRET_FAILED;
    }
    return run_job(j, timeout_ms, result, secret_out);
}

int sfsecret_store(const sfsecret_options *options, const char *account, const char *kind,
                   const char *label, const char *secret, int timeout_ms, sfsecret_result *result) {
    if (!valid_text(account) || !valid_text(kind) || secret == NULL) {
        set_result(result, SFSECRET_INVALID, secret == NULL ? "the secret is missing" : "account and kind must not be empty");
        return SFSECRET_INVALID;
    }
    if (prepare(options, result) != 0) return result ? result->status : SFSECRET_INVALID;
    job *j = job_new(OP_STORE, options, account, kind);
    if (j == NULL) {
        set_result(result, SFSECRET_FAILED, "out of memory");
        return SFSECRET_FAILED;
    }
    j->label = strdup(valid_text(label) ? label : account);
    j->secret = strdup(secret);
    if (j->label == NULL || j->secret == NULL) {
        job_unref(j);
        set_result(result, SFSECRET_FAILED, "out of memory");
        return SFSECRET_FAILED;
    }
    return run_job(j, timeout_ms, result, NULL);
}

int sfsecret_delete(const sfsecret_options *options, const char *account, const char *kind,
                    int timeout_ms, sfsecret_result *result) {
    if (!valid_text(account) || !valid_text(kind)) {
        set_result(result, SFSECRET_INVALID, "account and kind must not be empty");
        return SFSECRET_INVALID;
    }
    if (prepare(options, result) != 0) return result ? result->status : SFSECRET_INVALID;
    job *j = job_new(OP_DELETE, options, account, kind);
    if (j == NULL) {
        set_result(result, SFSECRET_FAILED, "out of memory");
        return SFSECRET_FAILED;
    }
    return run_job(j, timeout_ms, result, NULL);
}

int sfsecret_probe(const sfsecret_options *options, int timeout_ms, sfsecret_result *result) {
    if (prepare(options, result) != 0) return result ? result->status : SFSECRET_INVALID;
    job *j = job_new(OP_PROBE, options, NULL, NULL);
    if (j == NULL) {
        set_result(result, SFSECRET_FAILED, "out of memory");
        return SFSECRET_FAILED;
    }
    return run_job(j, timeout_ms, result, NULL);
}

void sfsecret_free_secret(char *secret) { wipe_free(secret); }
