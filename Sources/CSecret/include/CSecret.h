// Placeholder: the keyring shim is being written.
#pragma once
int sfsecret_placeholder(void);
