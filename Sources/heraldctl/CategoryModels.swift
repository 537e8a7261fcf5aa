/// A category as `heraldctl categories create` sends it from flags.
struct CategoryBody: Encodable {
    struct Router: Codable {
        var routerURL: String?
        var externalURL: String?

        init(routerURL: String? = nil, externalURL: String? = nil) {
            self.routerURL = routerURL
            self.externalURL = externalURL
        }

        enum CodingKeys: String, CodingKey {
            case routerURL = "router_url"
            case externalURL = "external_url"
        }
    }

    struct Action: Encodable {
        var identifier: String
        var title: String
        var router: Router?
    }

    var identifier: String?
    var options: [String]?
    var defaultRouter: Router?
    var actions: [Action] = []

    enum CodingKeys: String, CodingKey {
        case identifier, options, actions
        case defaultRouter = "default_router"
    }
}

/// A category as the server answers it (the fields heraldctl shows).
struct CategoryModel: Decodable {
    struct Action: Decodable {
        var identifier: String
        var title: String
        var router: CategoryBody.Router?
    }

    var identifier: String
    var version: Int
    var defaultRouter: CategoryBody.Router?
    var actions: [Action]?
    var updatedAt: String?

    enum CodingKeys: String, CodingKey {
        case identifier, version, actions
        case defaultRouter = "default_router"
        case updatedAt = "updated_at"
    }
}

struct CategoryList: Decodable {
    var categories: [CategoryModel]
}

struct CategoryDevices: Decodable {
    struct Count: Decodable {
        var version: Int
        var count: Int
    }

    var version: Int
    var devices: [Count]
    var total: Int
}

/// An audience: `"all"` or filters.
enum AudienceBody: Encodable {
    case all
    case filter(registrationID: [String]?, alias: [String]?, tag: [String]?)

    enum CodingKeys: String, CodingKey {
        case registrationID = "registration_id"
        case alias, tag
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .all:
            var container = encoder.singleValueContainer()
            try container.encode("all")
        case .filter(let registrationID, let alias, let tag):
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(registrationID, forKey: .registrationID)
            try container.encodeIfPresent(alias, forKey: .alias)
            try container.encodeIfPresent(tag, forKey: .tag)
        }
    }
}

struct DeliverBody: Encodable {
    var audience: AudienceBody
}

struct Delivered: Decodable {
    var msgID: String
    var identifier: String
    var version: Int

    enum CodingKeys: String, CodingKey {
        case msgID = "msg_id"
        case identifier, version
    }
}
