// sfauth's main program (`sfauth-main`). People run it through the front end (`Sources/sfauth`),
// which answers `sfauth token` with a usable stored token by itself and hands every other command here.
import Dispatch

Task { await SFAuthCommand.runAndExit() }
dispatchMain()
