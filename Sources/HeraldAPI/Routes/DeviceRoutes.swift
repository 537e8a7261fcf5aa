import Foundation
import HeraldCore
import HeraldStore
import Hummingbird
import Logging

/// `/v3/devices`: registration by the SDK, and the device API operators know from JPush.
struct DeviceRoutes {
    let store: APIStore
    let auth: Authentication
    let body: JSONBody

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v3/devices", access: .open, use: registerDevice)
        routes.on(.get, "/v3/devices/{registration_id}", access: .appOrDevice(.devicesRead), use: getDevice)
        routes.on(.post, "/v3/devices/{registration_id}", access: .appOrDevice(.devicesWrite), use: updateDevice)
        routes.on(.delete, "/v3/devices/{registration_id}", access: .appOrDevice(.devicesWrite), use: deleteDevice)
    }

    @Sendable func registerDevice(_ request: Request, context: HeraldRequestContext) async throws -> EditedResponse<RegisteredDeviceResponse> {
        let input = try await body.decode(RegisterDeviceRequest.self, from: request)
        let (appKey, registration) = try input.validated()
        let device = try await store.devices.register(appKey: appKey, registration, proof: try Self.registrationProof(request))
        context.logger.debug(
            "device registered",
            metadata: ["herald.registration_id": "\(device.registrationID)", "herald.created": "\(device.created)"]
        )
        return EditedResponse(status: device.created ? .created : .ok, response: RegisteredDeviceResponse(device))
    }

    @Sendable func getDevice(_ request: Request, context: HeraldRequestContext) async throws -> DeviceResponse {
        let registrationID = try context.parameter("registration_id")
        let principal = try await auth.requireAppOrDevice(request, registrationID: registrationID)
        guard let device = try await store.devices.find(appID: principal.appID, registrationID: registrationID) else {
            throw Self.notFound(registrationID)
        }
        return DeviceResponse(device)
    }

    @Sendable func updateDevice(_ request: Request, context: HeraldRequestContext) async throws -> DeviceResponse {
        let registrationID = try context.parameter("registration_id")
        let principal = try await auth.requireAppOrDevice(request, registrationID: registrationID)
        let change = try await body.decode(UpdateDeviceRequest.self, from: request).validated()
        let device = try await store.devices.update(appID: principal.appID, registrationID: registrationID, change)
        return DeviceResponse(device)
    }

    @Sendable func deleteDevice(_ request: Request, context: HeraldRequestContext) async throws -> HTTPResponse.Status {
        let registrationID = try context.parameter("registration_id")
        let principal = try await auth.requireAppOrDevice(request, registrationID: registrationID)
        guard try await store.devices.delete(appID: principal.appID, registrationID: registrationID) else {
            throw Self.notFound(registrationID)
        }
        return .noContent
    }

    /// The credentials an installation already holds, sent as Basic
    /// `registration_id:device_secret` to keep its registration when it registers again.
    private static func registrationProof(_ request: Request) throws(HeraldError) -> (registrationID: String, deviceSecret: String)? {
        guard let header = request.headers[.authorization] else { return nil }
        guard let credentials = BasicCredentials(authorization: header) else {
            throw HeraldError(.unauthorized, "Authorization: expected Basic registration_id:device_secret, or none")
        }
        return (credentials.user, credentials.password)
    }

    static func notFound(_ registrationID: String) -> HeraldError {
        HeraldError(.deviceNotFound, "registration_id: no device \(registrationID) in this app")
    }
}
