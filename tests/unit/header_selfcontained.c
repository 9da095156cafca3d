/* Compiles the public header alone to prove it is self-contained. */
#include "hipobj.h"

int main(void) {
  struct hipobj_client_config cfg = HIPOBJ_CLIENT_CONFIG_INIT;
  return cfg.struct_size == sizeof cfg ? 0 : 1;
}
