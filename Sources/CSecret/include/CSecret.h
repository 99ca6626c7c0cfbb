// The Secret Service keyring (gnome-keyring, KWallet, KeePassXC …) through libsecret, which is
// loaded with dlopen on first use.
//
// Linking libsecret would load GLib, GObject, GIO and libgcrypt into every process start, so this
// target links only libdl: it declares the few libsecret/GLib types it needs itself (no
// libsecret-1-dev, no pkg-config) and resolves the functions with dlopen/dlsym the first time the
// keyring is used. The declarations match libsecret's stable ABI since 0.18 (SecretSchema is a
// public struct there; checked against 0.20.5's headers) and GLib 2.x's GError.
//
// It never asks the keyring to unlock (no SECRET_SEARCH_UNLOCK, no prompts), and it turns off
// GLib's exit-on-close on the shared session bus connection (by default GLib raises SIGTERM in the
// whole process when the session bus goes away).
//
// Every operation runs on a thread of its own and is bounded by `timeout_ms`: when the deadline
// passes, its GCancellable is cancelled, and if libsecret still has not returned shortly after, the
// call returns SFSECRET_TIMED_OUT and leaves the worker to finish (and free its own memory) on its
// own. So a wedged daemon can never hang the caller. All functions are thread-safe.

#ifndef SFAUTH_CSECRET_H
#define SFAUTH_CSECRET_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// What an operation found. The numbers are stable (Swift maps them to messages).
typedef enum {
    /// Done. For a lookup, the secret may still be NULL (none stored).
    SFSECRET_OK = 0,
    /// libsecret could not be loaded (`message` has dlerror's text).
    SFSECRET_NO_LIBRARY = 1,
    /// No D-Bus session bus: DBUS_SESSION_BUS_ADDRESS unset (and no $XDG_RUNTIME_DIR/bus), or the
    /// bus could not be reached (`message` has GLib's text).
    SFSECRET_NO_BUS = 2,
    /// A session bus, but nothing owns org.freedesktop.secrets and none could be started.
    SFSECRET_NO_SERVICE = 3,
    /// The Secret Service has no "default" collection to store into.
    SFSECRET_NO_COLLECTION = 4,
    /// The collection (or the item) is locked. Never prompts to unlock.
    SFSECRET_LOCKED = 5,
    /// No answer within the timeout (or the daemon let a D-Bus call time out).
    SFSECRET_TIMED_OUT = 6,
    /// Anything else; `message` has libsecret's/GLib's text.
    SFSECRET_FAILED = 7,
    /// Bad arguments (NULL, or not valid for libsecret).
    SFSECRET_INVALID = 8,
} sfsecret_status;

/// The outcome of one call: a status and one line of detail (may be empty). Every function needs
/// one (a NULL result makes it return SFSECRET_INVALID without doing anything).
typedef struct {
    int status;
    char message[512];
} sfsecret_result;

/// Which library and schema to use. All fields may be NULL for the defaults.
typedef struct {
    /// NULL-terminated list of file names to try with dlopen; NULL means {"libsecret-1.so.0"}.
    /// Only the first successful load in a process counts: later calls reuse it.
    const char *const *library_names;
    /// The schema name stored in each item's `xdg:schema` attribute; NULL means
    /// "io.sfauth.Credentials". Items of other schemas are never returned, replaced or deleted.
    const char *schema_name;
} sfsecret_options;

/// Looks up the secret stored for (`account`, `kind`). On SFSECRET_OK, `*secret_out` is a
/// NUL-terminated copy (free it with `sfsecret_free_secret`) or NULL when none is stored.
/// A locked keyring is reported as SFSECRET_LOCKED, never as "not found"; it is never unlocked.
int sfsecret_lookup(const sfsecret_options *options, const char *account, const char *kind,
                    int timeout_ms, char **secret_out, sfsecret_result *result);

/// Stores (creates or replaces) the secret for (`account`, `kind`) in the default collection,
/// with `label` as the item's label.
int sfsecret_store(const sfsecret_options *options, const char *account, const char *kind,
                   const char *label, const char *secret, int timeout_ms, sfsecret_result *result);

/// Deletes every item of the schema for (`account`, `kind`). SFSECRET_OK when there was none.
int sfsecret_delete(const sfsecret_options *options, const char *account, const char *kind,
                    int timeout_ms, sfsecret_result *result);

/// Checks that a usable keyring is there: a session bus, a Secret Service daemon on it, and an
/// unlocked default collection. Returns at once (without loading libsecret) when there is no
/// session bus address at all.
int sfsecret_probe(const sfsecret_options *options, int timeout_ms, sfsecret_result *result);

/// Overwrites and frees a secret returned by `sfsecret_lookup`. NULL is fine.
void sfsecret_free_secret(char *secret);

#ifdef __cplusplus
}
#endif

#endif
