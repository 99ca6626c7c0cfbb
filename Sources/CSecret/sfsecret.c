#include "CSecret.h"
int sfsecret_placeholder(void) { return 0; }
