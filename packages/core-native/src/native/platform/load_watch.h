#ifndef MATE_PLATFORM_LOAD_WATCH_H_
#define MATE_PLATFORM_LOAD_WATCH_H_

// Calls listeners after every object the program's loader opens: the
// executable's own dlopen import (or libnode.so's, for distribution builds
// of Node), through which Node loads every addon, is redirected to a
// wrapper. The listeners run after dlopen returns, before Node calls the
// addon's registration function, so an addon's imports can be rewritten
// before it runs. Shared by the native-heap guard and CUDA redirection.
namespace mate {
namespace platform {

using LoadListener = void (*)();

// Adds `listener` (at most 4, each once). False when the loader's dlopen
// import could not be redirected: objects loaded later are then seen only
// when someone asks (a refresh at test start).
bool WatchLoads(LoadListener listener);

}  // namespace platform
}  // namespace mate

#endif  // MATE_PLATFORM_LOAD_WATCH_H_
