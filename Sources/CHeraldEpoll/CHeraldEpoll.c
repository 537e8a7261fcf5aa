#include "CHeraldEpoll.h"
