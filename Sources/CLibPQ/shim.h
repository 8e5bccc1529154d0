#ifndef MOCKSTOCK_CLIBPQ_SHIM_H
#define MOCKSTOCK_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
